"""Each held-apart set's provenance for the intent report (issue 18): when it was written and what reading it has
had, newest first; `intent_report.py` prints the notes beside each set's figures. Prose only, no figures, no query text.
"""

# each held-apart set's provenance: when it was written and what reading it has had
HELDOUT_SET_NOTES = (
    (
        "v55",
        "written blind in session 58 by a helper that read only `benchmarks/data/README.md`, in v54's shape, and "
        "read once later in that session, pooled with chat42, as the judge of the shipped guard against router 3 "
        "(router 2's words, then a learned English-or-not test on character n-grams); both made 40 errors over the "
        "two sets, row for row, and router 3 did not ship (`intent_veto_judge_v55.json`); the figures here are the "
        "model's alone",
    ),
    (
        "chat42",
        "500 chat turns and 60 chat-wrapped requests, written blind in session 58 like v55 and read once with it "
        "(`intent_veto_judge_chat42.json`); the model's figures alone",
    ),
    (
        "v54",
        "written blind in session 57 by a helper that read only `benchmarks/data/README.md`, in v53's shape, and "
        "read once in session 58, pooled with chat41, as the judge of the shipped guard against router 2 (more "
        "languages written in Latin letters sent to the multilingual part; written in session 43, where it tied); it "
        "made 39 errors over the two sets against the shipped guard's 41 and shipped (`intent_veto_judge_v54.json`); "
        "the figures here are the model's alone",
    ),
    (
        "chat41",
        "500 chat turns and 60 chat-wrapped requests, written blind in session 57 like v54 and read once with it "
        "(`intent_veto_judge_chat41.json`); the model's figures alone",
    ),
    (
        "v53",
        "written blind in session 56 by a helper that read only `benchmarks/data/README.md`, in v52's shape, and "
        "read once in session 57, pooled with chat40, as the judge of the shipped guard against the vector raise (a "
        "logistic head on the MiniLM vector fitted on every read set up to v52 and chat39, its line set on the "
        "calibration split); it made 48 errors over the two sets against the shipped guard's 52 and shipped "
        "(`intent_veto_judge_v53.json`); the figures here are the model's alone",
    ),
    (
        "chat40",
        "500 chat turns and 60 chat-wrapped requests, written blind in session 56 like v53 and read once with it "
        "(`intent_veto_judge_chat40.json`); the model's figures alone",
    ),
    (
        "v52",
        "written blind in session 56 by a helper that read only `benchmarks/data/README.md`, in v51's shape, and "
        "read once later in that session, pooled with chat39, as the judge of the shipped guard against the either "
        "raise at band 12, line 5 (chosen on the read sets v48 to v50 and chat35 to chat37 within the calibration "
        "bound); it made 38 errors over the two sets against the shipped guard's 37 and did not ship "
        "(`intent_veto_judge_v52.json`); the figures here are the model's alone",
    ),
    (
        "chat39",
        "500 chat turns and 60 chat-wrapped requests, written blind in session 56 like v52 and read once with it "
        "(`intent_veto_judge_chat39.json`); the model's figures alone",
    ),
    (
        "v51",
        "written blind in session 55 by a helper that read only `benchmarks/data/README.md`, in v50's shape, and "
        "read once in session 56, pooled with chat38, as the judge of the shipped guard against the either raise at "
        "band 7, line 2.5 (chosen on the read sets v48 to v50 and chat35 to chat37 within the calibration bound); it "
        "made 41 errors over the two sets, as the shipped guard did, row for row, and did not ship "
        "(`intent_veto_judge_v51.json`); the figures here are the model's alone",
    ),
    (
        "chat38",
        "500 chat turns and 60 chat-wrapped requests, written blind in session 55 like v51 and read once with it "
        "(`intent_veto_judge_chat38.json`); the model's figures alone",
    ),
    (
        "v50",
        "written blind in session 54 by a helper that read only `benchmarks/data/README.md`, in v49's shape, and "
        "read once in session 55, pooled with chat37, as the judge of the shipped guard against MB (the MiniLM "
        "verifier refitted on every read set up to v47 and chat34, its point bounded by the public buckets); MB made "
        "52 errors over the two sets, as the shipped guard did, and did not ship (`intent_veto_judge_v50.json`); the "
        "figures here are the model's alone",
    ),
    (
        "chat37",
        "500 chat turns and 60 chat-wrapped requests, written blind in session 54 like v50 and read once with it "
        "(`intent_veto_judge_chat37.json`); the model's figures alone",
    ),
    (
        "v49",
        "written blind in session 53 by a helper that read only `benchmarks/data/README.md`, in v48's shape, and "
        "read once in session 54, pooled with chat36, as the judge of the shipped guard against EZ1B (the e5 "
        "verifier refitted on every read set up to v47 and chat34, its routed raise at line 4.5); it made 53 errors "
        "over the two sets against 55 and shipped (`intent_veto_judge_v49.json`); the figures here are the model's "
        "alone",
    ),
    (
        "chat36",
        "500 chat turns and 60 chat-wrapped requests, written blind in session 53 like v49 and read once with it "
        "(`intent_veto_judge_chat36.json`); the model's figures alone",
    ),
    (
        "v48",
        "written blind in session 52 by a helper that read only `benchmarks/data/README.md`, in v47's shape, and "
        "read once in session 54, with chat35, as the development sets of the thirty-eighth round (EZ1's routed raise "
        "band and line chosen on their e5 lane, `intent_e5_band.json`); the figures here are the model's alone",
    ),
    (
        "chat35",
        "500 chat turns and 60 chat-wrapped requests, written blind in session 52 like v48 and read once with it as a "
        "development set; the model's figures alone",
    ),
    (
        "v47",
        "written blind in session 51 by a helper that read only `benchmarks/data/README.md`, in v46's shape, and "
        "read once in session 52, pooled with chat34, as the judge of the shipped guard against the either raise read "
        "whole (English queries of at most 120 characters, 6 logits under the line, line 2) and WIDE (12 logits); it "
        "made 68 errors over the two sets against 70 and shipped, WIDE 51 (`intent_veto_judge_v47.json`); the figures "
        "here are the model's alone",
    ),
    (
        "chat34",
        "500 chat turns and 60 chat-wrapped requests, written blind in session 51 like v47 and read once with it "
        "(`intent_veto_judge_chat34.json`); the model's figures alone",
    ),
    (
        "v46",
        "written blind in session 50 by a helper that read only `benchmarks/data/README.md`, in v45's shape, and "
        "read once in session 51, pooled with v45, chat32 and chat33, as the judge of the shipped guard against the "
        "either raise for English queries of at most 120 characters (5 logits under the line, line 3); it made 138 "
        "errors over the four sets against 154 and shipped (`intent_veto_judge_v46.json`); the figures here are the "
        "model's alone",
    ),
    (
        "chat33",
        "500 chat turns and 60 chat-wrapped requests, written blind like v46 and read once with it "
        "(`intent_veto_judge_chat33.json`); the model's figures alone",
    ),
    (
        "v45",
        "written blind in session 49 in v44's shape and read once with v46 (`intent_veto_judge_v45.json`); the "
        "figures here are the model's alone",
    ),
    (
        "chat32",
        "500 chat turns and 60 chat-wrapped requests, written blind in session 49 like v45 and read once with v46 "
        "(`intent_veto_judge_chat32.json`); the model's figures alone",
    ),
    (
        "v44",
        "written blind in session 48 by a helper that read only `benchmarks/data/README.md`, in v42's shape, and "
        "read once in session 50, pooled with v43, chat30 and chat31, as the judge of the shipped guard against the "
        "either raise reaching 8 logits under the line at line 5; it made 124 errors over the four sets against 147 "
        "and became an opt-in (`intent_veto_judge_v44.json`); the figures here are the model's alone",
    ),
    (
        "chat31",
        "500 chat turns and 60 chat-wrapped requests, written blind like v44 and read once with it "
        "(`intent_veto_judge_chat31.json`); the model's figures alone",
    ),
    (
        "v43",
        "written blind in session 48 like v44 and read once with it (`intent_veto_judge_v43.json`); the figures "
        "here are the model's alone",
    ),
    (
        "chat30",
        "500 chat turns and 60 chat-wrapped requests, written blind like v43 and read once with it "
        "(`intent_veto_judge_chat30.json`); the model's figures alone",
    ),
    (
        "v42",
        "written blind in session 48 by a helper that read only `benchmarks/data/README.md`, in v40's shape, and "
        "read once that session, pooled with v41, chat28 and chat29, as the judge of the shipped guard against the e5 "
        "raise reaching 12 logits under the line at raise line 3.5; it made 141 errors over the four sets against 153 "
        "and shipped (`intent_veto_judge_v42.json`); the figures here are the model's alone",
    ),
    (
        "chat29",
        "500 chat turns and 60 chat-wrapped requests, written blind like v42 and read once with it "
        "(`intent_veto_judge_chat29.json`); the model's figures alone",
    ),
    (
        "v41",
        "written blind in session 48 like v42 and read once with it (`intent_veto_judge_v41.json`); the figures "
        "here are the model's alone",
    ),
    (
        "chat28",
        "500 chat turns and 60 chat-wrapped requests, written blind like v41 and read once with it "
        "(`intent_veto_judge_chat28.json`); the model's figures alone",
    ),
    (
        "v40",
        "written blind in session 47 by a helper that read only `benchmarks/data/README.md`, in v38's shape, and "
        "read once that session, pooled with v39, chat26 and chat27, as the judge of the shipped guard against EY, the "
        "e5 verifier refitted with the rows of every read development set; EY made 179 errors over the four sets "
        "against 196 and shipped (`intent_veto_judge_v40.json`); the figures here are the model's alone",
    ),
    (
        "chat27",
        "500 chat turns and 60 chat-wrapped requests, written blind like v40 and read once with it "
        "(`intent_veto_judge_chat27.json`); the model's figures alone",
    ),
    (
        "v39",
        "written blind in session 47 like v40 and read once with it (`intent_veto_judge_v39.json`); the figures "
        "here are the model's alone",
    ),
    (
        "chat26",
        "500 chat turns and 60 chat-wrapped requests, written blind like v39 and read once with it "
        "(`intent_veto_judge_chat26.json`); the model's figures alone",
    ),
    (
        "v38",
        "written blind in session 47 by a helper that read only `benchmarks/data/README.md`, in v37's shape, and "
        "read once that session, pooled with v37, chat24 and chat25, as the judge of the shipped guard against EX, the "
        "e5 verifier refitted with the rows of twenty-two spent development sets; EX made 161 errors over the four "
        "sets against 164 and shipped (`intent_veto_judge_v38.json`); the figures here are the model's alone",
    ),
    (
        "chat25",
        "500 chat turns and 60 chat-wrapped requests, written blind like v38 and read once with it "
        "(`intent_veto_judge_chat25.json`); the model's figures alone",
    ),
    (
        "v37",
        "written blind in session 46 by a helper that read only `benchmarks/data/README.md`, in v36's shape, and "
        "read once in session 47 with v38 (`intent_veto_judge_v37.json`); the figures here are the model's alone",
    ),
    (
        "chat24",
        "500 chat turns and 60 chat-wrapped requests, written blind like v37 and read once with it "
        "(`intent_veto_judge_chat24.json`); the model's figures alone",
    ),
    (
        "v36",
        "written blind in session 45 by a helper that read only `benchmarks/data/README.md`, in v35's shape, and "
        "read once in session 46 as the judge of the shipped guard against EO, the packaged files with the e5 verifier "
        "raising English near misses at line 4; EO made 88 errors over v36 and chat23 against 89 and became an opt-in "
        "(`intent: {raise_either: 4.0}`), not the default (`intent_veto_judge_v36.json`); the figures here are the "
        "model's alone",
    ),
    (
        "chat23",
        "500 chat turns and 60 chat-wrapped requests, written blind like v36 and read once with it "
        "(`intent_veto_judge_chat23.json`); the model's figures alone",
    ),
    (
        "v35",
        "written blind in session 44 by a helper that read only `benchmarks/data/README.md`, in v34's shape, and "
        "read once in session 45 as the judge of the shipped guard against EL, the packaged e5 second opinion with its "
        "line at +3.0 above the operating point; EL made 98 errors over v35 and chat22 against 98 and did not ship "
        "(`intent_veto_judge_v35.json`); the figures here are the model's alone",
    ),
    (
        "chat22",
        "500 chat turns and 60 chat-wrapped requests, written blind like v35 and read once with it "
        "(`intent_veto_judge_chat22.json`); the model's figures alone",
    ),
    (
        "v34",
        "written blind in session 44 by a helper that read only `benchmarks/data/README.md`, in v33's shape, and "
        "read once that session as the judge of the shipped guard against MW, ME's MiniLM refit with the chat-wrapped "
        "training requests weighed 3 too; MW made 99 errors over v34 and chat21 against 98 and did not ship "
        "(`intent_veto_judge_v34.json`); the figures here are the model's alone",
    ),
    (
        "chat21",
        "500 chat turns and 60 chat-wrapped requests, written blind like v34 and read once with it "
        "(`intent_veto_judge_chat21.json`); the model's figures alone",
    ),
    (
        "v33",
        "written blind in session 43 by a helper that read only `benchmarks/data/README.md`, in v32's shape, and "
        "read once in session 44 as the judge of the shipped guard against ME, whose MiniLM second opinion is "
        "refitted with twelve spent development sets' rows and Enron's benign training e-mails weighed 5; ME made 93 "
        "errors over v33 and chat20 against 91 and did not ship (`intent_veto_judge_v33.json`); the figures here are "
        "the model's alone",
    ),
    (
        "chat20",
        "500 chat turns and 60 chat-wrapped requests, written blind like v33 and read once with it "
        "(`intent_veto_judge_chat20.json`); the model's figures alone",
    ),
    (
        "v32",
        "written blind in session 42 by a helper that read only `benchmarks/data/README.md`, in v31's shape, and "
        "read once in session 43 as the judge of the shipped guard against R2, the same model and second opinions "
        "with router 2 (more languages written in Latin letters sent to the multilingual part); R2 made as many "
        "errors over v32 and chat19 (66) and did not ship (`intent_veto_judge_v32.json`); the figures here are the "
        "model's alone",
    ),
    (
        "chat19",
        "500 chat turns and 60 chat-wrapped requests, written blind like v32 and read once with it "
        "(`intent_veto_judge_chat19.json`); the model's figures alone",
    ),
    (
        "v31",
        "written blind in session 41 by a helper that read only `benchmarks/data/README.md`, in v30's shape, and "
        "read once in session 42 as the judge of the shipped guard against EC, whose e5 second opinion is refitted "
        "with the rows of twelve spent development sets (v19, chat6, v20, chat7, v22, chat9, v23, chat10, v24, "
        "chat11, v25 and chat12, whose e5-lane figures through the guard are fitted since); EC made 9 errors fewer "
        "over v31 and chat18 and shipped (`intent_veto_judge_v31.json`); the figures here are the model's alone",
    ),
    (
        "chat18",
        "500 chat turns and 60 chat-wrapped requests, written blind like v31 and read once with it "
        "(`intent_veto_judge_chat18.json`); the model's figures alone",
    ),
    (
        "v30",
        "written blind in session 41 by a helper that read only `benchmarks/data/README.md`, in v29's shape, and "
        "read once that session as the judge of the shipped guard against MR, whose MiniLM second opinion is "
        "refitted on v13's rows; MR made 8 errors fewer over v30 and chat17 and shipped "
        "(`intent_veto_judge_v30.json`); the figures here are the model's alone",
    ),
    (
        "chat17",
        "500 chat turns and 60 chat-wrapped requests, written blind like v30 and read once with it "
        "(`intent_veto_judge_chat17.json`); the model's figures alone",
    ),
    (
        "v29",
        "written blind in session 40 by a helper that read only `benchmarks/data/README.md`, in v28's shape, and "
        "read once in session 41 as the judge of the shipped guard against RW, whose raise reads near misses whole; "
        "RW made 6 errors more over v29 and chat16 and did not ship (`intent_veto_judge_v29.json`); the figures "
        "here are the model's alone",
    ),
    (
        "chat16",
        "500 chat turns and 60 chat-wrapped requests, written blind like v29 and read once with it "
        "(`intent_veto_judge_chat16.json`); the model's figures alone",
    ),
    (
        "v28",
        "written blind in session 40 by a helper that read only `benchmarks/data/README.md`, in v27's shape, and "
        "read once that session as the judge of the shipped guard against RV, whose e5 veto line is +2 instead "
        "of +1; RV made 3 errors fewer over v28 and chat15 and shipped (`intent_veto_judge_v28.json`); the "
        "figures here are the model's alone",
    ),
    (
        "chat15",
        "500 chat turns and 60 chat-wrapped requests, written blind like v28 and read once with it "
        "(`intent_veto_judge_chat15.json`); the model's figures alone",
    ),
    (
        "v27",
        "written blind in session 37 by a helper that read only `benchmarks/data/README.md`, in v26's shape, and "
        "read once in session 40 as the judge of the shipped guard against RS, the same guard whose second "
        "opinion also raises near misses; RS made 2 errors fewer over v27 and chat14 and shipped "
        "(`intent_veto_judge_v27.json`); the figures here are the model's alone",
    ),
    (
        "chat14",
        "500 chat turns and 60 chat-wrapped requests, written blind like v27 and read once with it "
        "(`intent_veto_judge_chat14.json`); the model's figures alone",
    ),
    (
        "v26",
        "written blind in session 36 by a helper that read only `benchmarks/data/README.md`, in v25's shape, and "
        "read once in session 38 as the judge of candidate N (v13 with a hidden layer in its multilingual part) "
        "against v13, each with the shipped second opinion; N made 2 errors more (`intent_veto_judge_v26.json`); "
        "the figures here are the model's alone",
    ),
    (
        "chat13",
        "500 chat turns and 60 chat-wrapped requests, written blind like v26 and read once with it "
        "(`intent_veto_judge_chat13.json`); the model's figures alone",
    ),
    (
        "v25",
        "written blind in session 36 by a helper that read only `benchmarks/data/README.md`, in v24's shape, and "
        "read once in session 37 as the judge of candidate W (v13 with object rows) against v13, each with the "
        "shipped second opinion; W passed and was held back for blocking benign users (`intent_veto_judge_v25.json`); "
        "the figures here are the model's alone",
    ),
    (
        "chat12",
        "500 chat turns and 60 chat-wrapped requests, written blind like v25 and read once with it "
        "(`intent_veto_judge_chat12.json`); the model's figures alone",
    ),
    (
        "v24",
        "written blind in session 36 by a helper that read only `benchmarks/data/README.md`, in v23's shape, and "
        "read once that session as the judge of the e5 second opinion refitted on v13 against the shipped one "
        "(`intent_veto_judge_v24.json`); the figures here are the model's alone",
    ),
    (
        "chat11",
        "500 chat turns and 60 chat-wrapped requests, written blind like v24 and read once with it "
        "(`intent_veto_judge_chat11.json`); the model's figures alone",
    ),
    (
        "v23",
        "written blind in session 35 by a helper that read only `benchmarks/data/README.md`, in v22's shape, and "
        "read once in session 36 for the shipped v13 alone with its second opinion, no candidate of the v14 round "
        "having reached its judges (`intent_veto_judge_v23.json`); the figures here are the model's alone",
    ),
    (
        "chat10",
        "500 chat turns and 60 chat-wrapped requests, written blind like v23 and read once with it "
        "(`intent_veto_judge_chat10.json`); the model's figures alone",
    ),
    (
        "v22",
        "written blind in session 34 by a helper that read only `benchmarks/data/README.md`, in v21's shape, and "
        "read once in session 35 as the judge of model v13 against v12, each with the shipped second opinion "
        "(`intent_veto_judge_v22.json`); the figures here are the model's alone",
    ),
    (
        "chat9",
        "500 chat turns and 60 chat-wrapped requests, written blind like v22 and read once with it "
        "(`intent_veto_judge_chat9.json`); the model's figures alone",
    ),
    (
        "v21",
        "written blind in session 33, read once in session 34 as the judge of candidate L against v12 "
        "(`intent_veto_judge_v21.json`); a training set of v13",
    ),
    ("chat8", "chat turns and chat-wrapped requests, read as v21 was; a training set of v13"),
    (
        "v20",
        "written blind in session 32 by a helper that read only `benchmarks/data/README.md`, in v19's shape, and "
        "read once that session as the judge of the e5 second opinion refitted on v12 against the shipped one "
        "(`intent_veto_judge_v20.json`); the figures here are the model's alone",
    ),
    (
        "chat7",
        "500 chat turns (190 follow-ups) and 60 chat-wrapped requests, written blind like v20 and read once with "
        "it (`intent_veto_judge_chat7.json`); the model's figures alone",
    ),
    (
        "v19",
        "written blind in session 31 by a helper that read only `benchmarks/data/README.md`, in v18's shape, and "
        "read once that session as the judge of model v12 against v11, each with the shipped second opinion "
        "(`intent_veto_judge_v19.json`); the figures here are the model's alone",
    ),
    (
        "chat6",
        "500 chat turns and 60 chat-wrapped requests, written blind like v19 and read once with it "
        "(`intent_veto_judge_chat6.json`); the model's figures alone",
    ),
    (
        "v18",
        "written blind in session 29 by a helper that read only `benchmarks/data/README.md`, in v17's shape, and "
        "read once in session 31 as the judge of first-stage candidate D against v11, each with the shipped "
        "second opinion (`intent_veto_judge_v18.json`; D won there but failed the test-bucket gate); the "
        "figures here are the model's alone",
    ),
    (
        "chat5",
        "500 chat turns and 60 chat-wrapped requests, written blind like v18 and read once with it "
        "(`intent_veto_judge_chat5.json`); the model's figures alone",
    ),
    (
        "v17",
        "written blind in session 28 by a helper, read once in session 29 as the judge of the MiniLM second "
        "opinion; then a development set of the first-stage candidates (session 30-31)",
    ),
    ("chat4", "chat turns and chat-wrapped requests, read as v17 was, and a development set since"),
    (
        "v16",
        "written blind in session 28 by a helper, read once that session as the judge of the e5 second "
        "opinion; then a development set of the first-stage candidates (session 30-31)",
    ),
    ("chat3", "chat turns and chat-wrapped requests, read as v16 was, and a development set since"),
    (
        "v12",
        "written by hand after v11 shipped, blind to model scores, as the judge of a v12 model; no v12 "
        "candidate beat v11 on the development sets, so it was read once with the shipped v11 (and the "
        "guard's readings of invisible characters, ROT47, keyboard shifts and Braille, written before "
        "it was read); requests in 43 languages, hard benign and chat turns",
    ),
    (
        "v11",
        "written by hand after v10 shipped, blind to model scores, and committed before any model-v11 change; "
        "read once, for the v11 candidate chosen on the development sets v8, v9, v10 and chat; requests in "
        "43 languages, hard benign and chat turns",
    ),
    (
        "v10",
        "written by hand after v9 shipped, blind to model scores, and committed before any model-v10 change; "
        "read once, for the v10 candidate chosen on the development sets v9 and chat; v11's development set; "
        "requests in 30 languages, hard benign and chat turns",
    ),
    (
        "v9",
        "written by hand after v8 shipped, blind to model scores, and committed before any model-v9 change; "
        "read once, for the v9 candidate chosen on the development sets v8 and chat (its errors were then "
        "studied for v10, whose development set it is, as it is v11's); paraphrases that avoid "
        "the bank's words, obfuscated, padded in 15 languages, chat-wrapped and other requests; hard benign "
        "(60 of 120 non-English) and chat turns",
    ),
    (
        "chat",
        "chat turns: thanks, greetings, acknowledgements, follow-ups about the previous answer and questions "
        "about the assistant, and extraction requests wrapped in pleasantries; 13 languages; written by hand "
        "by another session blind to model scores, committed before any v8 candidate with chat turns was "
        "scored; read twice, for the first build of v8 and the rebuilt one (and v7); v9's to v11's "
        "development set",
    ),
    (
        "v8",
        "written by hand, blind to model scores, and committed before any model-v8 change; read twice, for "
        "the first build of the v8 candidate chosen on the development set v7 and the rebuilt one (and for "
        "v7); v9's to v11's development set; format demands, role-play, fake "
        "authority, chunk-walk and padded requests in 17 languages",
    ),
    (
        "v7",
        "written and committed before any model-v7 change; read once for v7; from v8 the development "
        "set, so no longer a held-apart figure",
    ),
    (
        "v6",
        "written and committed before any model-v6 change; read once for v6; from v7 the development "
        "set, so no longer a held-apart figure",
    ),
    (
        "v5",
        "written and committed before any model-v5 training change; read for the one v5 candidate "
        "chosen without it (and for v3); from v6 the development set the v6 candidates were chosen on, "
        "so no longer a held-apart figure",
    ),
    (
        "v4",
        "written and committed before any model-v4 training change, never read while training v4; the "
        "three v5 candidates were compared on it; the styles of its extraction requests are in no training row",
    ),
    ("v3", "written and committed before any model-v3 change, never read while training or tuning; reported once"),
    ("v2", "written before model v2 was trained; its items were never read, but v3 was chosen after v2's rates"),
    (
        "v1",
        "written before model v1; read once to diagnose v1 (it blocked 34% of its hard benign "
        "questions), so it is no longer untouched for v2",
    ),
)
