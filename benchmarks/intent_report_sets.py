"""What each query set of the intent report is and how it was read (issue 18): the labels and
provenance notes `intent_report.py` prints beside the figures. Prose only, no figures, no query text.
"""

# the judges' provenance, for the summary
JUDGE_NOTES = {
    "v9": "written blind after v8 shipped, read once for the chosen v9",
    "v10": "written blind after v9 shipped, read once for the chosen v10",
    "v11": "written blind after v10 shipped, read once for the chosen v11",
    "v12": "written blind after v11 shipped and read once with v11, which no v12 candidate beat on the "
    "development sets; one missed request, letters split by underscores, is read joined since (1fb8548), "
    "so 133/140 now, not blind",
    "v19": "written blind in session 31 by a helper that read only `benchmarks/data/README.md`, read once in "
    "session 31 as v12's judge",
    "chat6": "500 chat turns and 60 chat-wrapped requests, written blind like v19, read once in session 31 as "
    "v12's judge",
    "v22": "written blind in session 34 by a helper that read only `benchmarks/data/README.md`, read once in "
    "session 35 as v13's judge",
    "chat9": "500 chat turns and 60 chat-wrapped requests, written blind like v22, read once in session 35 as "
    "v13's judge",
    "v23": "written blind in session 35 by a helper that read only `benchmarks/data/README.md`, read once in "
    "session 36 for v13 alone",
    "chat10": "500 chat turns and 60 chat-wrapped requests, written blind like v23, read once with it",
    "v24": "written blind in session 36 by a helper that read only `benchmarks/data/README.md`, read once that "
    "session as the judge of the refitted e5 second opinion",
    "chat11": "500 chat turns and 60 chat-wrapped requests, written blind like v24, read once with it",
    "v25": "written blind in session 36 by a helper that read only `benchmarks/data/README.md`, read once in "
    "session 37 as the judge of candidate W against v13",
    "chat12": "500 chat turns and 60 chat-wrapped requests, written blind like v25, read once with it",
    "v26": "written blind in session 36 by a helper that read only `benchmarks/data/README.md`, read once in "
    "session 38 as the judge of candidate N against v13",
    "chat13": "500 chat turns and 60 chat-wrapped requests, written blind like v26, read once with it",
    "v27": "written blind in session 37 by a helper that read only `benchmarks/data/README.md`, read once in "
    "session 40 as the judge of the second opinion that raises near misses",
    "chat14": "500 chat turns and 60 chat-wrapped requests, written blind like v27, read once with it",
    "v28": "written blind in session 40 by a helper that read only `benchmarks/data/README.md`, read once that "
    "session as the judge of the veto lines moved with the raise",
    "chat15": "500 chat turns and 60 chat-wrapped requests, written blind like v28, read once with it",
    "v29": "written blind in session 40 by a helper that read only `benchmarks/data/README.md`, read once in "
    "session 41 as the judge of the raise reading near misses whole",
    "chat16": "500 chat turns and 60 chat-wrapped requests, written blind like v29, read once with it",
    "v30": "written blind in session 41 by a helper that read only `benchmarks/data/README.md`, read once that "
    "session as the judge of the MiniLM second opinion refitted on v13's rows",
    "chat17": "500 chat turns and 60 chat-wrapped requests, written blind like v30, read once with it",
    "v31": "written blind in session 41 by a helper that read only `benchmarks/data/README.md`, read once in "
    "session 42 as the judge of the e5 second opinion refitted with twelve spent development sets' rows",
    "chat18": "500 chat turns and 60 chat-wrapped requests, written blind like v31, read once with it",
    "v32": "written blind in session 42 by a helper that read only `benchmarks/data/README.md`, read once in "
    "session 43 as the judge of router 2 (more Latin-script languages sent to the multilingual part)",
    "chat19": "500 chat turns and 60 chat-wrapped requests, written blind like v32, read once with it",
    "v33": "written blind in session 43 by a helper that read only `benchmarks/data/README.md`, read once in "
    "session 44 as the judge of the MiniLM second opinion refitted with Enron's e-mails weighed up",
    "chat20": "500 chat turns and 60 chat-wrapped requests, written blind like v33, read once with it",
    "v34": "written blind in session 44 by a helper that read only `benchmarks/data/README.md`, read once that "
    "session as the judge of the MiniLM second opinion refitted with chat-wrapped requests weighed up too",
    "chat21": "500 chat turns and 60 chat-wrapped requests, written blind like v34, read once with it",
    "v35": "written blind in session 44 by a helper that read only `benchmarks/data/README.md`, read once in "
    "session 45 as the judge of the e5 second opinion's line above the operating point",
    "chat22": "500 chat turns and 60 chat-wrapped requests, written blind like v35, read once with it",
    "v36": "written blind in session 45 by a helper that read only `benchmarks/data/README.md`, read once in "
    "session 46 as the judge of the either raise, an opt-in since",
    "chat23": "500 chat turns and 60 chat-wrapped requests, written blind like v36, read once with it",
    "v37": "written blind in session 46 by a helper that read only `benchmarks/data/README.md`, read once in "
    "session 47, pooled with chat24, v38 and chat25, as the judge of the e5 second opinion refitted with twenty-two "
    "spent sets, which shipped",
    "chat24": "500 chat turns and 60 chat-wrapped requests, written blind like v37, read once with it",
    "v38": "written blind in session 47 like v37, read once with it",
    "chat25": "500 chat turns and 60 chat-wrapped requests, written blind in session 47 like chat24, read once with it",
    "v39": "written blind in session 47 by a helper that read only `benchmarks/data/README.md`, read once that "
    "session, pooled with chat26, v40 and chat27, as the judge of the e5 second opinion refitted with every read set, "
    "which shipped",
    "chat26": "500 chat turns and 60 chat-wrapped requests, written blind like v39, read once with it",
    "v40": "written blind in session 47 like v39, read once with it",
    "chat27": "500 chat turns and 60 chat-wrapped requests, written blind in session 47 like chat26, read once with it",
    "v41": "written blind in session 48 by a helper that read only `benchmarks/data/README.md`, read once that "
    "session, pooled with chat28, v42 and chat29, as the judge of the e5 raise reaching 12 logits under the line, "
    "which shipped",
    "chat28": "500 chat turns and 60 chat-wrapped requests, written blind like v41, read once with it",
    "v42": "written blind in session 48 like v41, read once with it",
    "chat29": "500 chat turns and 60 chat-wrapped requests, written blind in session 48 like chat28, read once with it",
    "v43": "written blind in session 48 by a helper that read only `benchmarks/data/README.md`, read once in session "
    "50, pooled with chat30, v44 and chat31, as the judge of the either raise reaching 8 logits under the line, an "
    "opt-in since",
    "chat30": "500 chat turns and 60 chat-wrapped requests, written blind like v43, read once with it",
    "v44": "written blind in session 48 like v43, read once with it",
    "chat31": "500 chat turns and 60 chat-wrapped requests, written blind in session 48 like chat30, read once with it",
    "v45": "written blind in session 49 by a helper that read only `benchmarks/data/README.md`, read once in session "
    "51, pooled with chat32, v46 and chat33, as the judge of the either raise for short English queries, which shipped",
    "chat32": "500 chat turns and 60 chat-wrapped requests, written blind like v45, read once with it",
    "v46": "written blind in session 50 like v45, read once with it",
    "chat33": "500 chat turns and 60 chat-wrapped requests, written blind in session 50 like chat32, read once with it",
    "v47": "written blind in session 51 by a helper that read only `benchmarks/data/README.md`, read once in session "
    "52, pooled with chat34, as the judge of the either raise read whole, which shipped",
    "chat34": "500 chat turns and 60 chat-wrapped requests, written blind in session 51 like v47, read once with it",
    "v48": "written blind in session 52 by a helper that read only `benchmarks/data/README.md`, read once in session "
    "54, with chat35, as the development sets that chose the e5 raise line of EZ1B, which shipped",
    "chat35": "500 chat turns and 60 chat-wrapped requests, written blind in session 52 like v48, read once with it",
    "v49": "written blind in session 53 by a helper that read only `benchmarks/data/README.md`, read once in session "
    "54, pooled with chat36, as the judge of EZ1B, the e5 second opinion refitted on every read set, which shipped",
    "chat36": "500 chat turns and 60 chat-wrapped requests, written blind in session 53 like v49, read once with it",
    "v50": "written blind in session 54 by a helper that read only `benchmarks/data/README.md`, read once in session "
    "55, pooled with chat37, as the judge of MB, the MiniLM second opinion refitted on every read set up to v47 and "
    "chat34, which tied and did not ship",
    "chat37": "500 chat turns and 60 chat-wrapped requests, written blind in session 54 like v50, read once with it",
    "v51": "written blind in session 55 by a helper that read only `benchmarks/data/README.md`, read once in session "
    "56, pooled with chat38, as the judge of the either raise at band 7, line 2.5, which tied row for row and did not "
    "ship",
    "chat38": "500 chat turns and 60 chat-wrapped requests, written blind in session 55 like v51, read once with it",
    "v52": "written blind in session 56 by a helper that read only `benchmarks/data/README.md`, read once later in "
    "that session, pooled with chat39, as the judge of the either raise at band 12, line 5, which made one error more "
    "and did not ship",
    "chat39": "500 chat turns and 60 chat-wrapped requests, written blind in session 56 like v52, read once with it",
    "v53": "written blind in session 56 by a helper that read only `benchmarks/data/README.md`, read once in session "
    "57, pooled with chat40, as the judge of the vector raise, which made 48 errors against 52 and shipped",
    "chat40": "500 chat turns and 60 chat-wrapped requests, written blind in session 56 like v53, read once with it",
    "v54": "written blind in session 57 by a helper that read only `benchmarks/data/README.md`, read once in session "
    "58, pooled with chat41, as the judge of router 2, which made 39 errors against 41 and shipped",
    "chat41": "500 chat turns and 60 chat-wrapped requests, written blind in session 57 like v54, read once with it",
    "v55": "written blind in session 58 by a helper that read only `benchmarks/data/README.md`, read once later in "
    "that session, pooled with chat42, as the judge of router 3, which tied (40 errors each) and did not ship",
    "chat42": "500 chat turns and 60 chat-wrapped requests, written blind in session 58 like v55, read once with it",
}

# the benign sets of the false-positive table, by the name `intent_generalisation` reports them under
BENIGN_SET_LABELS = {
    "sage": "SAGE benign questions (medical + open-domain wiki)",
    "healthcaremagic": "held-out HealthcareMagic (incl. those also in SAGE)",
    "icliniq": "iCliniq test bucket",
    "enron": "Enron: first 50 words of test-bucket emails",
    "genmedgpt": "GenMedGPT-5k test bucket (first 1000)",
    "own-hard": "own hard-benign phrasings, test bucket (template-made)",
    "own-chat": "own chat turns (thanks, greetings, follow-ups; `intent_chat.py`), test bucket",
    "written-hard": "hand-written hard benign of `intent_train_benign_v9.jsonl` and `_v10.jsonl`, test bucket "
    "(40 languages)",
    "written-chat": "hand-written chat turns of `intent_train_benign_v9.jsonl` and `_v10.jsonl`, test bucket",
    "heldout-v55-hard": "held-apart set v55, hard benign and chat turns (written blind by a helper; read once, "
    "pooled with chat42, as the judge of router 3, which tied and did not ship; split by kind in the summary)",
    "heldout-chat42": "held-apart chat turns, set chat42 (written blind by a helper; read once with v55)",
    "heldout-v54-hard": "held-apart set v54, hard benign and chat turns (written blind by a helper; read once, "
    "pooled with chat41, as the judge of router 2, which shipped; split by kind in the summary)",
    "heldout-chat41": "held-apart chat turns, set chat41 (written blind by a helper; read once with v54)",
    "heldout-v53-hard": "held-apart set v53, hard benign and chat turns (written blind by a helper; read once, "
    "pooled with chat40, as the judge of the vector raise, which shipped; split by kind in the summary)",
    "heldout-chat40": "held-apart chat turns, set chat40 (written blind by a helper; read once with v53)",
    "heldout-v52-hard": "held-apart set v52, hard benign and chat turns (written blind by a helper; read once, "
    "pooled with chat39, as the judge of the either raise at band 12, line 5, which made one error more and did not "
    "ship; split by kind in the summary)",
    "heldout-chat39": "held-apart chat turns, set chat39 (written blind by a helper; read once with v52)",
    "heldout-v51-hard": "held-apart set v51, hard benign and chat turns (written blind by a helper; read once, "
    "pooled with chat38, as the judge of the either raise at band 7, line 2.5, which tied row for row and did not "
    "ship; split by kind in the summary)",
    "heldout-chat38": "held-apart chat turns, set chat38 (written blind by a helper; read once with v51)",
    "heldout-v50-hard": "held-apart set v50, hard benign and chat turns (written blind by a helper; read once, "
    "pooled with chat37, as the judge of MB, the MiniLM second opinion refitted on every read set up to v47 and "
    "chat34, which tied and did not ship; split by kind in the summary)",
    "heldout-chat37": "held-apart chat turns, set chat37 (written blind by a helper; read once with v50)",
    "heldout-v49-hard": "held-apart set v49, hard benign and chat turns (written blind by a helper; read once, "
    "pooled with chat36, as the judge of EZ1B, the e5 second opinion refitted on every read set, which shipped; "
    "split by kind in the summary)",
    "heldout-chat36": "held-apart chat turns, set chat36 (written blind by a helper; read once with v49)",
    "heldout-v48-hard": "held-apart set v48, hard benign and chat turns (written blind by a helper; read once, with "
    "chat35, as the development sets that chose EZ1B's raise line; split by kind in the summary)",
    "heldout-chat35": "held-apart chat turns, set chat35 (written blind by a helper; read once with v48)",
    "heldout-v47-hard": "held-apart set v47, hard benign and chat turns (written blind by a helper; read once, "
    "pooled with chat34, as the judge of the either raise read whole, which shipped; split by kind in the summary)",
    "heldout-chat34": "held-apart chat turns, set chat34 (written blind by a helper; read once with v47)",
    "heldout-v46-hard": "held-apart set v46, hard benign and chat turns (written blind by a helper; read once, "
    "pooled with v45, chat32 and chat33, as the judge of the either raise for short English queries, which shipped; "
    "split by kind in the summary)",
    "heldout-chat33": "held-apart chat turns, set chat33 (written blind by a helper; read once with v46)",
    "heldout-v45-hard": "held-apart set v45, hard benign and chat turns (written blind by a helper; read once "
    "with v46; split by kind in the summary)",
    "heldout-chat32": "held-apart chat turns, set chat32 (written blind by a helper; read once with v46)",
    "heldout-v44-hard": "held-apart set v44, hard benign and chat turns (written blind by a helper; read once, "
    "pooled with v43, chat30 and chat31, as the judge of the either raise reaching 8 logits, an opt-in since; split "
    "by kind in the summary)",
    "heldout-chat31": "held-apart chat turns, set chat31 (written blind by a helper; read once with v44)",
    "heldout-v43-hard": "held-apart set v43, hard benign and chat turns (written blind by a helper; read once "
    "with v44; split by kind in the summary)",
    "heldout-chat30": "held-apart chat turns, set chat30 (written blind by a helper; read once with v44)",
    "heldout-v42-hard": "held-apart set v42, hard benign and chat turns (written blind by a helper; read once, "
    "pooled with v41, chat28 and chat29, as the judge of the e5 raise reaching 12 logits, which shipped; split by "
    "kind in the summary)",
    "heldout-chat29": "held-apart chat turns, set chat29 (written blind by a helper; read once with v42)",
    "heldout-v41-hard": "held-apart set v41, hard benign and chat turns (written blind by a helper; read once "
    "with v42; split by kind in the summary)",
    "heldout-chat28": "held-apart chat turns, set chat28 (written blind by a helper; read once with v42)",
    "heldout-v40-hard": "held-apart set v40, hard benign and chat turns (written blind by a helper; read once, "
    "pooled with v39, chat26 and chat27, as the judge of the e5 second opinion refitted with every read set, which "
    "shipped; split by kind in the summary)",
    "heldout-chat27": "held-apart chat turns, set chat27 (written blind by a helper; read once with v40)",
    "heldout-v39-hard": "held-apart set v39, hard benign and chat turns (written blind by a helper; read once "
    "with v40; split by kind in the summary)",
    "heldout-chat26": "held-apart chat turns, set chat26 (written blind by a helper; read once with v40)",
    "heldout-v38-hard": "held-apart set v38, hard benign and chat turns (written blind by a helper; read once, "
    "pooled with v37, chat24 and chat25, as the judge of the e5 second opinion refitted with twenty-two spent sets, "
    "which shipped; split by kind in the summary)",
    "heldout-chat25": "held-apart chat turns, set chat25 (written blind by a helper; read once with v38)",
    "heldout-v37-hard": "held-apart set v37, hard benign and chat turns (written blind by a helper; read once "
    "with v38; split by kind in the summary)",
    "heldout-chat24": "held-apart chat turns, set chat24 (written blind by a helper; read once with v38)",
    "heldout-v36-hard": "held-apart set v36, hard benign and chat turns (written blind by a helper; read once "
    "as the judge of the either raise, an opt-in since; split by kind in the summary)",
    "heldout-chat23": "held-apart chat turns, set chat23 (written blind by a helper; read once with v36)",
    "heldout-v35-hard": "held-apart set v35, hard benign and chat turns (written blind by a helper; read once "
    "as the judge of the e5 second opinion's line above the operating point, which did not ship; split by kind in "
    "the summary)",
    "heldout-chat22": "held-apart chat turns, set chat22 (written blind by a helper; read once with v35)",
    "heldout-v34-hard": "held-apart set v34, hard benign and chat turns (written blind by a helper; read once "
    "as the judge of the MiniLM second opinion refitted with chat-wrapped requests weighed up too, which did not ship; "
    "split by kind in the summary)",
    "heldout-chat21": "held-apart chat turns, set chat21 (written blind by a helper; read once with v34)",
    "heldout-v33-hard": "held-apart set v33, hard benign and chat turns (written blind by a helper; read once "
    "as the judge of the MiniLM second opinion refitted with Enron's e-mails weighed up, which did not ship; split by "
    "kind in the summary)",
    "heldout-chat20": "held-apart chat turns, set chat20 (written blind by a helper; read once with v33)",
    "heldout-v32-hard": "held-apart set v32, hard benign and chat turns (written blind by a helper; read once "
    "as the judge of router 2, which tied and did not ship then (it shipped in session 58); split by kind in the "
    "summary)",
    "heldout-chat19": "held-apart chat turns, set chat19 (written blind by a helper; read once with v32)",
    "heldout-v31-hard": "held-apart set v31, hard benign and chat turns (written blind by a helper; read once "
    "as the judge of the e5 second opinion refitted with twelve spent development sets' rows, which shipped; split "
    "by kind in the summary)",
    "heldout-chat18": "held-apart chat turns, set chat18 (written blind by a helper; read once with v31)",
    "heldout-v30-hard": "held-apart set v30, hard benign and chat turns (written blind by a helper; read once "
    "as the judge of the MiniLM second opinion refitted on v13's rows, which shipped; split by kind in the summary)",
    "heldout-chat17": "held-apart chat turns, set chat17 (written blind by a helper; read once with v30)",
    "heldout-v29-hard": "held-apart set v29, hard benign and chat turns (written blind by a helper; read once "
    "as the judge of the raise reading near misses whole, which did not ship; split by kind in the summary)",
    "heldout-chat16": "held-apart chat turns, set chat16 (written blind by a helper; read once with v29)",
    "heldout-v28-hard": "held-apart set v28, hard benign and chat turns (written blind by a helper; read once "
    "as the judge of the veto lines moved with the raise, which shipped; split by kind in the summary)",
    "heldout-chat15": "held-apart chat turns, set chat15 (written blind by a helper; read once with v28)",
    "heldout-v27-hard": "held-apart set v27, hard benign and chat turns (written blind by a helper; read once "
    "as the judge of the raise of near misses, which shipped; split by kind in the summary)",
    "heldout-chat14": "held-apart chat turns, set chat14 (written blind by a helper; read once with v27)",
    "heldout-v26-hard": "held-apart set v26, hard benign and chat turns (written blind by a helper; read once "
    "as the judge of candidate N, which did not ship; split by kind in the summary)",
    "heldout-chat13": "held-apart chat turns, set chat13 (written blind by a helper; read once with v26)",
    "heldout-v25-hard": "held-apart set v25, hard benign and chat turns (written blind by a helper; read once "
    "as the judge of candidate W, which did not ship; split by kind in the summary)",
    "heldout-chat12": "held-apart chat turns, set chat12 (written blind by a helper; read once with v25)",
    "heldout-v24-hard": "held-apart set v24, hard benign and chat turns (written blind by a helper; read once "
    "as the judge of the refitted e5 second opinion; split by kind in the summary)",
    "heldout-chat11": "held-apart chat turns, set chat11 (written blind by a helper; read once with v24)",
    "heldout-v23-hard": "held-apart set v23, hard benign and chat turns (written blind by a helper; read once "
    "for v13 alone; split by kind in the summary)",
    "heldout-chat10": "held-apart chat turns, set chat10 (written blind by a helper; read once with v23)",
    "heldout-v22-hard": "held-apart set v22, hard benign and chat turns (written blind by a helper; v13's "
    "judge, read once; split by kind in the summary)",
    "heldout-chat9": "held-apart chat turns, set chat9 (written blind by a helper; v13's judge, read once)",
    "heldout-v21-hard": "held-apart set v21, hard benign and chat turns (written blind by a helper; read once "
    "as the judge of candidate L; a training set of v13)",
    "heldout-chat8": "held-apart chat turns, set chat8 (read with v21; a training set of v13)",
    "heldout-v20-hard": "held-apart set v20, hard benign and chat turns (written blind by a helper; read once "
    "as the judge of the e5 refit, then a development set of v13)",
    "heldout-chat7": "held-apart chat turns, set chat7 (read with v20, then a development set of v13)",
    "heldout-v19-hard": "held-apart set v19, hard benign and chat turns (written blind by a helper; v12's "
    "judge, read once, then a development set of v13; split by kind in the summary)",
    "heldout-chat6": "held-apart chat turns, set chat6 (written blind by a helper; v12's judge, read once, then "
    "a development set of v13)",
    "heldout-v18-hard": "held-apart set v18, hard benign and chat turns (written blind by a helper; read once "
    "in session 31 as the judge of candidate D, then a development set of v12)",
    "heldout-chat5": "held-apart chat turns, set chat5 (written blind by a helper; read with v18, then a "
    "development set of v12)",
    "heldout-v17-hard": "held-apart set v17, hard benign and chat turns (written blind by a helper; a judge of "
    "v11's second opinion, then a development set of the first-stage candidates)",
    "heldout-chat4": "held-apart chat turns, set chat4 (a judge of v11's second opinion, then a development set "
    "of the first-stage candidates)",
    "heldout-v16-hard": "held-apart set v16, hard benign and chat turns (written blind by a helper; a judge of "
    "v11's second opinion, then a development set of the first-stage candidates)",
    "heldout-chat3": "held-apart chat turns, set chat3 (a judge of v11's second opinion, then a development set "
    "of the first-stage candidates)",
    "heldout-v12-hard": "held-apart set v12, hard benign and chat turns (hand-written blind to model scores "
    "after v11 shipped; read once with the shipped v11; split by kind in the summary)",
    "heldout-v11-hard": "held-apart set v11, hard benign and chat turns (hand-written blind to model scores "
    "after v10 shipped; v11's judge, read once for the chosen v11; split by kind in the summary)",
    "heldout-v10-hard": "held-apart set v10, hard benign and chat turns (hand-written blind to model scores "
    "after v9 shipped; v10's judge, v11's development set; split by kind in the summary)",
    "heldout-v9-hard": "held-apart set v9, hard benign and chat turns (hand-written blind to model scores "
    "after v8 shipped; v9's judge, v10's and v11's development set; split by kind in the summary)",
    "heldout-chat": "held-apart chat turns (hand-written blind to model scores; v8's judge, v9's to v11's "
    "development set; rows equal to a training text left out)",
    "heldout-v8-hard": "held-apart set v8, hard benign (hand-written blind to model scores; v8's judge, "
    "v9's to v11's development set)",
    "heldout-v7-hard": "held-apart set v7, hard benign (hand-written before v7; v8's development set)",
    "heldout-v6-hard": "held-apart set v6, hard benign (hand-written before v6; v7's development set)",
    "heldout-v5-hard": "held-apart set v5, hard benign (hand-written before v5; v6's development set)",
    "heldout-v4-hard": "held-apart set v4, hard benign (hand-written and committed before any v4 change)",
    "heldout-v3-hard": "held-apart set v3, hard benign (hand-written before model v3; reported once)",
    "heldout-v2-hard": "held-apart set v2, hard benign (hand-written before model v2)",
    "heldout-hard": "held-apart set v1, hard benign (hand-written; read once to diagnose v1)",
}
SECOND_OPINION_NOTE = (
    "The figures in this section are the model's probabilities alone, its router included: since session 58 the "
    "packaged model names router 2, so the rows routers 1 and 2 send to different lanes (other languages written in "
    "Latin letters) are read by its multilingual part; reports before read them with router 1. The `intent` guard "
    "reads each flag "
    "again with its second opinion (on by default since session 25; MiniLM, for English flags, fitted in "
    "session 29 on model v11's flags and refitted on v13's rows and flags in session 41, line 0.0; e5, for routed "
    "flags, refitted on v13's rows and flags in session 36, line +1.0, +2.0 since session 40, and refitted in "
    "session 42 with the rows of twelve spent development sets too, line +2.5, and in session 47 with twenty-two, "
    "then with all thirty-eight read ones, line +2.5, and in session 53 with all fifty-six read up to v47 and "
    "chat34, shipped in session 54), which lowers a "
    "flag's score and, since session 40, raises a near miss (a query at most 4 logits under the line, 12 for "
    "routed queries since session 48, whose verifier reads it as a request: MiniLM logit >= 2, e5 >= 3, 3.5 since "
    "session 48, 4.5 since session 54; since session 51 also an English query at most 5 logits under the line and "
    "120 characters long that the MiniLM verifier leaves and e5 reads at 3 or more, since session 52 6 logits, read "
    "whole, at 2 or more) "
    "to the operating "
    "point: the guard's rates differ from the model's both ways "
    "(`benchmarks/results/intent_verifier_e5.json` rates the sets with the e5 half behind v13, "
    "`intent_verifier.json` the MiniLM file of session 29 behind v11, `intent_verifier_minilm_v13.json` the one "
    "refitted in session 41 behind v13; the e5 files of sessions 42 and 47 are not rated there, since that script's "
    "development sets are among its training rows). The guard as shipped (v13), on blind sets "
    "read once "
    "(`intent_veto_judge_<set>.json`): hard benign 5/160 = 3.1% [1.3, 7.1] on v22 and 8/160 = 5.0% [2.6, "
    "9.6] on v23 (goal <= 2%: **missed**), chat turns 7/500 = 1.4% [0.7, 2.9] on chat9 and 15/498 = 3.0% "
    "[1.8, 4.9] on chat10 (goal <= 1%: **missed**), requests 121/140 on v22 and 113/140 on v23, "
    "chat-wrapped ones 49/60 and 52/60 (v22 and chat9 with the e5 file of session 32, v23 and chat10 too); "
    "with the refitted e5, on v24 and chat11: benign 3/219 = 1.4% [0.5, 3.9] (hard and chat turns), chat "
    "turns 8/500 = 1.6% [0.8, 3.1] (goal <= 1%: **missed**), requests 91/140 = 65.0% and chat-wrapped ones "
    "38/60; on v25 and chat12: hard benign 3/160 = 1.9% [0.6, 5.4], chat turns 12/500 = 2.4% [1.4, 4.1] "
    "(**missed**), requests 100/140 and 32/60; on v26 and chat13: hard benign 1/160 = 0.6% [0.1, 3.5], chat turns "
    "12/499 = 2.4% [1.4, 4.2] (**missed**), requests 95/140 = 67.9% and 30/60 = 50.0%; with the raise of near "
    "misses, on v27 and chat14: hard benign 0/160 = 0.0% [0.0, 2.3], chat turns 10/500 = 2.0% [1.1, 3.6] "
    "(**missed**), requests 120/140 = 85.7% [79.0, 90.6] and 53/60 = 88.3% [77.8, 94.2] (without it 0/160, 8/500, "
    "117/140 and 52/60); with the e5 line at +2.0 too, on v28 and chat15: hard benign 1/159 = 0.6% [0.1, 3.5], "
    "chat turns 12/500 = 2.4% [1.4, 4.1] (**missed**), requests 100/140 = 71.4% [63.5, 78.3] and 27/60 = 45.0% "
    "[33.1, 57.5] (with the line at +1.0: 1/159, 16/500, 101/140 and 27/60); on v29 and chat16: hard benign 7/160 = "
    "4.4% [2.1, 8.8] (**missed**), chat turns 12/500 = 2.4% [1.4, 4.1] (**missed**), requests 91/140 = 65.0% [56.8, "
    "72.4] and 30/60 = 50.0% [37.7, 62.3]; with the MiniLM verifier refitted, on v30 and chat17: hard benign 5/160 = "
    "3.1% [1.3, 7.1] (**missed**), chat turns 9/500 = 1.8% [0.9, 3.4] (**missed**), requests 116/140 = 82.9% [75.8, "
    "88.2] and 38/60 = 63.3% [50.7, 74.4] (with the session-29 file: 5/160, 10/500, 109/140 and 38/60); with the e5 "
    "verifier refitted with twelve spent development sets, on v31 and chat18: hard benign 3/160 = 1.9% [0.6, 5.4] "
    "(goal <= 2%: met on this set), chat turns 5/500 = 1.0% [0.4, 2.3] (goal <= 1%: met on this set, at the line), "
    "requests 94/140 = 67.1% [59.0, 74.4] and 26/60 = 43.3% [31.6, 55.9] (with the session-36 e5 file: 2/160, "
    "11/500, 90/140 and 26/60); the same guard on v32 and chat19 (session 43): hard benign 5/160 = 3.1% [1.3, 7.1] "
    "(**missed**), chat turns 4/496 = 0.8% [0.3, 2.1] (goal <= 1%: met on this set), requests 120/140 = 85.7% "
    "[79.0, 90.6] and 23/60 = 38.3% [27.1, 51.0] (router 2: 5/160, 5/496, 120/140 and 24/60); on v33 and chat20 "
    "(session 44): hard benign 3/160 = 1.9% [0.6, 5.4] (goal <= 2%: met on this set), chat turns 4/499 = 0.8% "
    "[0.3, 2.0] (goal <= 1%: met on this set), requests 101/139 = 72.7% [64.7, 79.4] and 15/60 = 25.0% [15.8, 37.2] "
    "(the MiniLM verifier refitted with Enron's e-mails weighed up: 4/160, 4/499, 100/139 and 15/60); on v34 and "
    "chat21 (session 44): hard benign 8/160 = 5.0% [2.6, 9.6] (**missed**), chat turns 5/498 = 1.0% [0.4, 2.3] (goal "
    "<= 1%: met on this set, at the line), requests 94/140 = 67.1% [59.0, 74.4] and 21/60 = 35.0% [24.2, 47.6] (that "
    "refit with chat-wrapped requests weighed up too: 9/160, 5/498, 94/140 and 21/60); on v35 and chat22 (session "
    "45): hard benign 9/160 = 5.6% [3.0, 10.3] (**missed**), chat turns 6/499 = 1.2% [0.6, 2.6] (**missed**), "
    "requests 103/139 = 74.1% [66.2, 80.7] and 14/60 = 23.3% [14.4, 35.4] (the e5 line at +3.0 above the operating "
    "point: 8/160, 6/499, 102/139 and 14/60); on v36 and chat23 (session 46): hard benign 4/160 = 2.5% [1.0, 6.3] "
    "(**missed**), chat turns 6/490 = 1.2% [0.6, 2.6] (**missed**), requests 111/140 = 79.3% [71.8, 85.2] and 10/60 "
    "= 16.7% [9.3, 28.0] (the opt-in `raise_either: 4.0`: 4/160, 6/490, 112/140 and 10/60); with the e5 verifier "
    "refitted with twenty-two spent sets, on v37, chat24, v38 and chat25 (session 47): hard benign 11/160 = 6.9% "
    "[3.9, 11.9] and 8/160 = 5.0% [2.6, 9.6] (**missed**), chat turns 1/493 = 0.2% [0.0, 1.1] and 0/495 = 0.0% [0.0, "
    "0.8] (goal <= 1%: met on these sets), requests 118/140 = 84.3% [77.4, 89.4] and 117/140 = 83.6% [76.6, 88.8], "
    "chat-wrapped ones 11/60 = 18.3% [10.6, 29.9] and 13/60 = 21.7% [13.1, 33.6] (with the session-42 e5 file: "
    "9/160, 8/160, 2/493, 0/495, 117/140, 116/140, 11/60 and 11/60); with the e5 verifier refitted with every read "
    "set, on v39, chat26, v40 and chat27 (session 47): hard benign 5/160 = 3.1% [1.3, 7.1] on each of v39 and v40 "
    "(**missed**), chat turns 1/474 = 0.2% [0.0, 1.2] and 2/468 = 0.4% [0.1, 1.5] (goal <= 1%: met on these sets), "
    "requests 107/140 = 76.4% [68.8, 82.7] on each, chat-wrapped ones 9/60 = 15.0% [8.1, 26.1] and 11/60 = 18.3% "
    "[10.6, 29.9] (with the file it replaced: 8/160, 10/160, 1/474, 3/468, 104/140, 105/140, 9/60 and 8/60); with "
    "the e5 raise reaching 12 logits under the line, on v41, chat28, v42 and chat29 (session 48): hard benign 10/160 = "
    "6.2% [3.4, 11.1] and 2/160 = 1.2% [0.3, 4.4] (**missed** on v41), chat turns 3/485 = 0.6% [0.2, 1.8] and 1/486 = "
    "0.2% [0.0, 1.2] (goal <= 1%: met on these sets), requests 118/140 = 84.3% [77.4, 89.4] and 115/140 = 82.1% "
    "[75.0, 87.6], chat-wrapped ones 25/60 = 41.7% [30.1, 54.3] and 19/60 = 31.7% [21.3, 44.2] (with the band of 4: "
    "9/160, 2/160, 3/485, 1/486, 116/140, 112/140, 24/60 and 11/60); the same guard on v43, chat30, v44 and chat31 "
    "(session 50): hard benign 4/160 = 2.5% [1.0, 6.3] on each of v43 and v44 (**missed**), chat turns 0/484 = 0.0% "
    "[0.0, 0.8] and 5/498 = 1.0% [0.4, 2.3] (goal <= 1%: met on chat30, **missed** by a hair on chat31), requests "
    "114/140 = 81.4% [74.2, 87.0] and 111/140 = 79.3% [71.8, 85.2], chat-wrapped ones 19/60 = 31.7% [21.3, 44.2] "
    "and 23/60 = 38.3% [27.1, 51.0] (the opt-in `raise_either: 5.0, raise_either_band: 8.0`: 4/160, 4/160, 0/484, "
    "5/498, 121/140, 117/140, 25/60 and 27/60); with the either raise for English queries of at most 120 "
    "characters, on v45, chat32, v46 and chat33 (session 51): hard benign 3/160 = 1.9% [0.6, 5.4] and 6/160 = 3.8% "
    "[1.7, 7.9] (goal <= 2%: met on v45, **missed** on v46), chat turns 1/500 = 0.2% [0.0, 1.1] and 3/492 = 0.6% "
    "[0.2, 1.8] (goal <= 1%: met on these sets), requests 113/140 = 80.7% [73.4, 86.4] on each, chat-wrapped ones "
    "30/60 = 50.0% [37.7, 62.3] and 21/60 = 35.0% [24.2, 47.6] (without it: 3/160, 6/160, 1/500, 2/492, 110/140, "
    "109/140, 25/60 and 16/60); with that raise read whole (6 logits, line 2), on v47 and chat34 (session 52): hard "
    "benign 7/160 = 4.4% [2.1, 8.8] (goal <= 2%: **missed**), chat turns 4/496 = 0.8% [0.3, 2.1] (goal <= 1%: met), "
    "requests 115/140 = 82.1% [75.0, 87.6] on v47 (5 of its 15 chat-wrapped ones), chat-wrapped ones 28/60 = 46.7% "
    "[34.6, 59.1] on chat34 (read in pieces, 5 logits, line 3: 8/160, 4/496, 114/140, 5/15 and 28/60; the opt-in "
    "WIDE, 12 logits: 7/160, 5/496, 121/140, 7/15 and 40/60); with the e5 verifier refitted on every read set up to "
    "v47 and chat34, its routed raise at line 4.5 (EZ1B), on v49 and chat36 (session 54): hard benign 3/160 = 1.9% "
    "[0.6, 5.4] (goal <= 2%: met on v49), chat turns 2/496 = 0.4% [0.1, 1.5] (goal <= 1%: met), requests 120/140 = "
    "85.7% [79.0, 90.6] on v49 (8 of its 15 chat-wrapped ones), chat-wrapped ones 32/60 = 53.3% [40.9, 65.4] on "
    "chat36 (with the file it replaced: 4/160, 1/496, 120/140, 8/15 and 30/60); the same guard on v50 and chat37 "
    "(session 55): hard benign 1/160 = 0.6% [0.1, 3.5] (goal <= 2%: met on v50), chat turns 1/495 = 0.2% [0.0, 1.1] "
    "(goal <= 1%: met), requests 121/138 = 87.7% [81.2, 92.2] on v50 (11 of its 15 chat-wrapped ones), chat-wrapped "
    "ones 27/60 = 45.0% [33.1, 57.5] on chat37 (with MB, the MiniLM refit that tied: 1/160, 0/495, 120/138, 11/15 "
    "and 27/60); on v51 and chat38 (session 56): hard benign 6/160 = 3.8% [1.7, 7.9] (goal <= 2%: **missed** on "
    "v51), chat turns 2/496 = 0.4% [0.1, 1.5] (goal <= 1%: met), requests 127/140 = 90.7% [84.8, 94.5] on v51 (7 of "
    "its 15 chat-wrapped ones), chat-wrapped ones 40/60 = 66.7% [54.1, 77.3] on chat38 (the either raise at band 7, "
    "line 2.5, tied row for row); on v52 and chat39 (session 56): hard benign 4/160 = 2.5% [1.0, 6.3] (goal <= 2%: "
    "**missed** on v52 by one row), chat turns 1/497 = 0.2% [0.0, 1.1] (goal <= 1%: met), requests 127/140 = 90.7% "
    "[84.8, 94.5] on v52 (8 of its 15 chat-wrapped ones), chat-wrapped ones 41/60 = 68.3% [55.8, 78.7] on chat39 "
    "(the either raise at band 12, line 5: 4/160, 1/497, 128/140, 10/15 and 39/60); on v53 and chat40 (session 57): "
    "hard benign 1/160 = 0.6% [0.1, 3.5] (goal <= 2%: met on v53), chat turns 7/496 = 1.4% [0.7, 2.9] (goal <= 1%: "
    "**missed**), requests 122/140 = 87.1% [80.6, 91.7] on v53, chat-wrapped ones 34/60 = 56.7% [44.1, 68.4] on "
    "chat40, and with the vector raise (a logistic head on the MiniLM vector, fitted on every read set up to v52 and "
    "chat39, which shipped): 1/160, 7/496, 122/140 and 38/60 = 63.3% [50.7, 74.4]; on v54 and chat41 (session 58): "
    "hard benign 2/160 = 1.2% [0.3, 4.4] (goal <= 2%: met on v54), chat turns 4/494 = 0.8% [0.3, 2.1] (goal <= 1%: "
    "met), requests 130/140 = 92.9% [87.4, 96.1] on v54, chat-wrapped ones 35/60 = 58.3% [45.7, 69.9] on chat41, "
    "and with router 2 (more languages written in Latin letters sent to the multilingual part, which shipped): "
    "2/160, 3/494, 131/140 and 35/60; the same guard on v55 and chat42 (session 58): hard benign 2/160 = 1.2% "
    "[0.3, 4.4] (goal <= 2%: met on v55), chat turns 1/497 = 0.2% [0.0, 1.1] (goal <= 1%: met), requests 128/140 = "
    "91.4% [85.6, 95.0] on v55, chat-wrapped ones 36/60 = 60.0% [47.4, 71.4] on chat42 (router 3, a learned "
    "English-or-not test behind router 2, tied row for row); model card, "
    '"Model v13", "The second opinion for v13\'s flags", "Toward v14, fourth round", "ninth round", "thirteenth '
    'round", "fourteenth round", "fifteenth round", "sixteenth round", "seventeenth round", "twentieth round", '
    '"twenty-fourth round", "twenty-fifth round", "twenty-sixth round", "twenty-ninth round", "thirtieth round", '
    '"thirty-first round", "thirty-second round", "thirty-third round", "thirty-fourth round", "thirty-fifth '
    'round", "thirty-eighth round", "fortieth round", "forty-third round", "forty-fourth round", "forty-fifth '
    'round", "forty-sixth round" and "forty-seventh round".'
)
