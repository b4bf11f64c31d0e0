"""The intent benchmarks' catalogue of hand-written query sets, and the examples they pass around (issue 18).

Which held-apart sets exist and what each was read for (`HELDOUT_SETS`, `UNREAD_JUDGES`, `JUDGES`);
the hand-written training rows' files (`WRITTEN_BENIGN`, `WRITTEN_ATTACKS`); `Example` and `Corpus`;
the stable hash split every real source is cut by (`bucket`, `split_of`); and when two texts are
one (`text_key`, `unseen`). `train_intent.py` builds the training corpus from these.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import query_sets as qs
from ragshield.guards.intent_model import IntentModel
from ragshield.types import iter_jsonl

REPO = qs.REPO
DATA = REPO / "benchmarks" / "data"  # the project's own hand-written sets (`benchmarks/data/README.md`)
PHRASINGS = REPO / "src" / "ragshield" / "data" / "intent_phrasings.jsonl"
HELDOUT = DATA / "intent_heldout.jsonl"
# v9: training rows written by hand (helper sessions blind to every held-apart set and score) for
# what v8 missed: non-English hard benign questions and chat turns, and requests that avoid the
# bank's words, obfuscated, padded in other languages, PII enumeration and chat-wrapped
# v10: more of them (a helper session blind to every held-apart set and to the pleasantries
# diagnostic), for what v9 got wrong on its judge: thanks and follow-ups on the answer in 40
# languages, translating the user's own quoted text, and their look-alike requests (thanks then a
# command, repeat the context, padded, obfuscated, PII enumeration) in the same 40 languages
WRITTEN_BENIGN = tuple(DATA / f"intent_train_benign_{v}.jsonl" for v in ("v9", "v10"))
WRITTEN_ATTACKS = tuple(DATA / f"intent_train_attack_{v}.jsonl" for v in ("v9", "v10"))
# session 37: contrastive training rows written blind (helper sessions that opened no set, score or
# project file) on the object of a request rather than its verb: other people's records with their
# personal fields and credentials, against the user's own records, templates and keys; a, English; b,
# 29 other languages. They train only a candidate's recipe (`train_intent.py --object-rows`)
OBJECT_ROWS = tuple(DATA / f"intent_train_object_{part}.jsonl" for part in ("a", "b"))
PRIVACY_ROWS = tuple(DATA / f"intent_train_privacy_{part}.jsonl" for part in ("a", "b", "c"))
HELDOUT_SETS = {
    "v1": HELDOUT,
    "v2": DATA / "intent_heldout_v2.jsonl",
    "v3": DATA / "intent_heldout_v3.jsonl",
    "v4": DATA / "intent_heldout_v4.jsonl",
    "v5": DATA / "intent_heldout_v5.jsonl",
    "v6": DATA / "intent_heldout_v6.jsonl",
    "v7": DATA / "intent_heldout_v7.jsonl",
    "v8": DATA / "intent_heldout_v8.jsonl",
    "chat": DATA / "intent_chat_heldout.jsonl",  # chat turns (v8): the judge of the "Thank you." fix
    "v9": DATA / "intent_heldout_v9.jsonl",
    "v10": DATA / "intent_heldout_v10.jsonl",  # written blind after v9 shipped: v10's judge, v11's development set
    "v11": DATA / "intent_heldout_v11.jsonl",  # written blind after v10 shipped: v11's judge
    # written blind after v11 shipped, for a v12 model; the v12 candidates of session 21 did not beat
    # v11 (`benchmarks/results/intent_v12_exploration.json`), so session 22 read it once as a second
    # judge of the shipped v11
    "v12": DATA / "intent_heldout_v12.jsonl",
    # written blind after that; read once in session 25 as the judge of v11 with its second opinion
    # (`benchmarks/results/intent_veto_judge_v13.json`): from then on a development set
    "v13": DATA / "intent_heldout_v13.jsonl",
    # written blind in session 26 and read once as the judge of the refitted second opinion
    # (`benchmarks/results/intent_veto_judge_v14.json`); the next change needs a new blind set
    "v14": DATA / "intent_heldout_v14.jsonl",
    # written blind in session 27 by helpers that read only `benchmarks/data/README.md` (v15 in v14's
    # shape; chat2: 500 chat turns and 60 chat-wrapped requests) and read once as the judges of
    # three second opinions (`intent_veto_judge_v15.json`, `_chat2.json`): none beat the shipped one
    "v15": DATA / "intent_heldout_v15.jsonl",
    "chat2": DATA / "intent_chat_heldout_v2.jsonl",
    # written blind in session 28 by helpers that read only `benchmarks/data/README.md` (v16 in v15's
    # shape; chat3: 500 chat turns and 60 chat-wrapped requests) and read once as the judges of the e5
    # second opinion refitted with the follow-up pairs v16a/v16b (`intent_veto_judge_v16.json`,
    # `_chat3.json`): it shipped
    "v16": DATA / "intent_heldout_v16.jsonl",
    "chat3": DATA / "intent_chat_heldout_v3.jsonl",
    # written blind in session 28 after the e5 refit shipped (v17 in v16's shape; chat4: 500 chat
    # turns and 60 chat-wrapped requests) and read once in session 29 as the judges of the MiniLM
    # second opinion refitted with the same pairs (`intent_veto_judge_v17.json`, `_chat4.json`): it shipped
    "v17": DATA / "intent_heldout_v17.jsonl",
    "chat4": DATA / "intent_chat_heldout_v4.jsonl",
    # written blind in session 29 by helpers that read only `benchmarks/data/README.md` (v18 in v17's
    # shape; chat5: 500 chat turns and 60 chat-wrapped requests) and read once in session 31 as the
    # judges of first-stage candidate D against v11, each with the shipped second opinion
    # (`intent_veto_judge_v18.json`, `_chat5.json`): D won there but failed the test-bucket gate
    "v18": DATA / "intent_heldout_v18.jsonl",
    "chat5": DATA / "intent_chat_heldout_v5.jsonl",
    # written blind in session 31 by helpers that read only `benchmarks/data/README.md` (v19 in v18's
    # shape; chat6: 500 chat turns and 60 chat-wrapped requests) and read once in session 31 as the
    # judges of model v12 against v11, each with the shipped second opinion
    # (`intent_veto_judge_v19.json`, `_chat6.json`)
    "v19": DATA / "intent_heldout_v19.jsonl",
    "chat6": DATA / "intent_chat_heldout_v6.jsonl",
    # written blind in session 32 by helpers that read only `benchmarks/data/README.md` (v20 in v19's
    # shape; chat7: 500 chat turns, 190 of them follow-ups, and 60 chat-wrapped requests) and read once
    # that session as the judges of the e5 second opinion refitted on model v12, against the shipped
    # one (`intent_veto_judge_v20.json`, `_chat7.json`): the refit shipped
    "v20": DATA / "intent_heldout_v20.jsonl",
    "chat7": DATA / "intent_chat_heldout_v7.jsonl",
    # written blind in session 33 by helpers that read only `benchmarks/data/README.md` (v21 in v20's
    # shape; chat8 in chat7's, with 10 of its 60 requests inside a longer innocent turn) and read once
    # in session 34 as the judges of candidate L against v12, each with the shipped second opinion
    # (`intent_veto_judge_v21.json`, `_chat8.json`): L won there, then blocked a benign user and did
    # not ship (`intent_v13_exploration.json`)
    "v21": DATA / "intent_heldout_v21.jsonl",
    "chat8": DATA / "intent_chat_heldout_v8.jsonl",
    # written blind in session 34 by helpers that read only `benchmarks/data/README.md` (v22 in v21's
    # shape; chat9 in chat8's) and read once in session 35 as the judges of candidate N against v12,
    # each with the shipped second opinion (`intent_veto_judge_v22.json`, `_chat9.json`)
    "v22": DATA / "intent_heldout_v22.jsonl",
    "chat9": DATA / "intent_chat_heldout_v9.jsonl",
    # written blind in session 35 (v23 in v22's shape, chat10 in chat9's) and read once in session 36,
    # for v13 alone: no candidate of the v14 round reached the judges (`intent_veto_judge_v23.json`,
    # `_chat10.json`; `intent_v14_exploration.json`)
    "v23": DATA / "intent_heldout_v23.jsonl",
    "chat10": DATA / "intent_chat_heldout_v10.jsonl",
    # written blind in session 36 (v24 in v23's shape, chat11 in chat10's) and read once that session as
    # the judges of the e5 second opinion refitted on v13 against the shipped one (`intent_veto_judge_v24.json`,
    # `_chat11.json`)
    "v24": DATA / "intent_heldout_v24.jsonl",
    "chat11": DATA / "intent_chat_heldout_v11.jsonl",
    # written blind in session 36 (v25 in v24's shape, chat12 in chat11's) and read once in session 37 as
    # the judges of the fourth v14 round, v13 and candidate W (`intent_veto_judge_v25.json`, `_chat12.json`)
    "v25": DATA / "intent_heldout_v25.jsonl",
    "chat12": DATA / "intent_chat_heldout_v12.jsonl",
    # written blind in session 36 (v26 in v25's shape, chat13 in chat12's) and read once in session 38 as
    # the judges of the ninth v14 round, v13 and candidate N (`intent_veto_judge_v26.json`, `_chat13.json`)
    "v26": DATA / "intent_heldout_v26.jsonl",
    "chat13": DATA / "intent_chat_heldout_v13.jsonl",
    # written blind in session 37 (v27 in v26's shape, chat14 in chat13's) and read once in session 40 as
    # the judges of the thirteenth v14 round, the shipped guard and RS, its second opinion raising near misses
    # (`intent_veto_judge_v27.json`, `_chat14.json`): RS shipped
    "v27": DATA / "intent_heldout_v27.jsonl",
    "chat14": DATA / "intent_chat_heldout_v14.jsonl",
    # written blind in session 40 (v28 in v27's shape, chat15 in chat14's) and read once that session as the
    # judges of the fourteenth v14 round, the shipped guard and RV, its veto lines and raise chosen together
    # (`intent_veto_judge_v28.json`, `_chat15.json`): RV shipped
    "v28": DATA / "intent_heldout_v28.jsonl",
    "chat15": DATA / "intent_chat_heldout_v15.jsonl",
    # written blind in session 40 (v29 in v28's shape, chat16 in chat15's) and read once in session 41 as the
    # judges of the fifteenth v14 round, the shipped guard and RW, its raise reading near misses whole
    # (`intent_veto_judge_v29.json`, `_chat16.json`): RW missed 10 more requests and did not ship
    "v29": DATA / "intent_heldout_v29.jsonl",
    "chat16": DATA / "intent_chat_heldout_v16.jsonl",
    # written blind in session 41 (v30 in v29's shape, chat17 in chat16's) and read once that session as the
    # judges of the sixteenth v14 round, the shipped guard and MR, its MiniLM second opinion refitted on v13's rows
    # (`intent_veto_judge_v30.json`, `_chat17.json`): MR shipped
    "v30": DATA / "intent_heldout_v30.jsonl",
    "chat17": DATA / "intent_chat_heldout_v17.jsonl",
    # written blind in session 41 (v31 in v30's shape, chat18 in chat17's) and read once in session 42 as the
    # judges of the seventeenth v14 round, the shipped guard and EC, its e5 second opinion refitted with twelve
    # spent development sets' rows (`intent_veto_judge_v31.json`, `_chat18.json`): EC shipped
    "v31": DATA / "intent_heldout_v31.jsonl",
    "chat18": DATA / "intent_chat_heldout_v18.jsonl",
    # written blind in session 42 (v32 in v31's shape, chat19 in chat18's) and read once in session 43 as the
    # judges of the twentieth v14 round, the shipped guard and R2, router 2 sending more Latin-script languages to
    # the multilingual part (`intent_veto_judge_v32.json`, `_chat19.json`): R2 tied (66 errors each), not shipped
    "v32": DATA / "intent_heldout_v32.jsonl",
    "chat19": DATA / "intent_chat_heldout_v19.jsonl",
    # written blind in session 43 (v33 in v32's shape, chat20 in chat19's) and read once in session 44 as the
    # judges of the twenty-fourth v14 round, the shipped guard and ME, its MiniLM second opinion refitted with
    # Enron's e-mails weighed up (`intent_veto_judge_v33.json`, `_chat20.json`): 93 errors against 91, not shipped
    "v33": DATA / "intent_heldout_v33.jsonl",
    "chat20": DATA / "intent_chat_heldout_v20.jsonl",
    # written blind in session 44 (v34 in v33's shape, chat21 in chat20's) and read once that session as the judges
    # of the twenty-fifth v14 round, the shipped guard and MW, ME's refit with chat-wrapped requests weighed up too
    # (`intent_veto_judge_v34.json`, `_chat21.json`): 99 errors against 98, not shipped
    "v34": DATA / "intent_heldout_v34.jsonl",
    "chat21": DATA / "intent_chat_heldout_v21.jsonl",
    # written blind in session 44 (v35 in v34's shape, chat22 in chat21's) and read once in session 45 as the judges
    # of the twenty-sixth v14 round, the shipped guard and EL, its e5 line at +3.0 above the operating point
    # (`intent_veto_judge_v35.json`, `_chat22.json`): 98 errors against 98, not shipped
    "v35": DATA / "intent_heldout_v35.jsonl",
    "chat22": DATA / "intent_chat_heldout_v22.jsonl",
    # written blind in session 45 (v36 in v35's shape, chat23 in chat22's) and read once in session 46 as the judges
    # of the twenty-ninth v14 round, the shipped guard and EO, the e5 verifier raising English near misses at line 4
    # (`intent_veto_judge_v36.json`, `_chat23.json`): 88 errors against 89, an opt-in (`raise_either`), not the default
    "v36": DATA / "intent_heldout_v36.jsonl",
    "chat23": DATA / "intent_chat_heldout_v23.jsonl",
    # written blind in session 46 (v37 in v36's shape, chat24 in chat23's) and session 47 (v38 in v37's, chat25 in
    # chat24's) and read once in session 47, pooled, as the judge of the thirtieth v14 round, the shipped guard and
    # EX, the e5 verifier refitted with twenty-two spent sets (`intent_veto_judge_v37.json`, `_chat24.json`,
    # `_v38.json`, `_chat25.json`): 161 errors against 164, shipped
    "v37": DATA / "intent_heldout_v37.jsonl",
    "chat24": DATA / "intent_chat_heldout_v24.jsonl",
    "v38": DATA / "intent_heldout_v38.jsonl",
    "chat25": DATA / "intent_chat_heldout_v25.jsonl",
    # written blind in session 47 (v39 and v40 in v38's shape, chat26 and chat27 in chat25's) and read once that
    # session, pooled, as the judge of the thirty-first v14 round, the shipped guard and EY, the e5 verifier refitted
    # with every read set (`intent_veto_judge_v39.json`, `_chat26.json`, `_v40.json`, `_chat27.json`): 179 errors
    # against 196, shipped; the only read sets no verifier trained on since
    "v39": DATA / "intent_heldout_v39.jsonl",
    "chat26": DATA / "intent_chat_heldout_v26.jsonl",
    "v40": DATA / "intent_heldout_v40.jsonl",
    "chat27": DATA / "intent_chat_heldout_v27.jsonl",
    # written blind in session 48 (v41 and v42 in v40's shape, chat28 and chat29 in chat27's) and read once that
    # session, pooled, as the judge of the thirty-second v14 round, the shipped guard and the e5 raise reaching 12
    # logits at line 3.5 (`intent_veto_judge_v41.json`, `_chat28.json`, `_v42.json`, `_chat29.json`): 141 errors
    # against 153, shipped; with v39, chat26, v40 and chat27, the only read sets no verifier trained on
    "v41": DATA / "intent_heldout_v41.jsonl",
    "chat28": DATA / "intent_chat_heldout_v28.jsonl",
    "v42": DATA / "intent_heldout_v42.jsonl",
    "chat29": DATA / "intent_chat_heldout_v29.jsonl",
    # written blind in session 48 (v43 and v44 in v42's shape, chat30 and chat31 in chat29's) and read once in session
    # 50, pooled, as the judge of the thirty-third v14 round, the shipped guard, the twenty-ninth round's opt-in and
    # the either raise reaching 8 logits at line 5 (`intent_veto_judge_v43.json`, `_chat30.json`, `_v44.json`,
    # `_chat31.json`): 124 errors against 147 and 133, an opt-in since; no verifier trained on them
    "v43": DATA / "intent_heldout_v43.jsonl",
    "chat30": DATA / "intent_chat_heldout_v30.jsonl",
    "v44": DATA / "intent_heldout_v44.jsonl",
    "chat31": DATA / "intent_chat_heldout_v31.jsonl",
    # written blind in sessions 49 (v45 in v44's shape, chat32 in chat31's) and 50 (v46 in v45's, chat33 in chat32's)
    # and read once in session 51, pooled, as the judge of the thirty-fourth v14 round, the shipped guard, the
    # thirty-third round's opt-in and the either raise for English queries of at most 120 characters
    # (`intent_veto_judge_v45.json`, `_chat32.json`, `_v46.json`, `_chat33.json`): 138 errors against 154, shipped;
    # no verifier trained on them
    "v45": DATA / "intent_heldout_v45.jsonl",
    "chat32": DATA / "intent_chat_heldout_v32.jsonl",
    "v46": DATA / "intent_heldout_v46.jsonl",
    "chat33": DATA / "intent_chat_heldout_v33.jsonl",
    # written blind in session 51 (v47 in v46's shape, chat34 in chat33's) and read once in session 52, pooled, as the
    # judge of the thirty-fifth v14 round, the shipped guard, the either raise read whole (band 6, line 2) and WIDE
    # (band 12, line 2) (`intent_veto_judge_v47.json`, `_chat34.json`): 68 errors against 70, shipped, and WIDE 51,
    # an opt-in; no verifier trained on them
    "v47": DATA / "intent_heldout_v47.jsonl",
    "chat34": DATA / "intent_chat_heldout_v34.jsonl",
    # written blind in session 52 (v48 in v47's shape, chat35 in chat34's) and read once in session 54 as the
    # development sets of the thirty-eighth v14 round (`intent_e5_band.py`: EZ1's routed raise band and line chosen
    # on them); no packaged file trained on or chose with them
    "v48": DATA / "intent_heldout_v48.jsonl",
    "chat35": DATA / "intent_chat_heldout_v35.jsonl",
    # written blind in session 53 (v49 in v48's shape, chat36 in chat35's) and read once in session 54, pooled, as the
    # judge of the thirty-eighth v14 round, the shipped guard and EZ1B, the e5 verifier refitted with every read set up
    # to v47 and chat34 at raise line 4.5 (`intent_veto_judge_v49.json`, `_chat36.json`): 53 errors against 55,
    # shipped; no verifier trained on them
    "v49": DATA / "intent_heldout_v49.jsonl",
    "chat36": DATA / "intent_chat_heldout_v36.jsonl",
    # written blind in session 54 (v50 in v49's shape, chat37 in chat36's) and read once in session 55, pooled, as the
    # judge of the fortieth v14 round, the shipped guard and MB, the MiniLM verifier refitted with every read set up to
    # v47 and chat34, its point bounded by the public buckets (`intent_veto_judge_v50.json`, `_chat37.json`): 52
    # errors against 52, not shipped; no packaged file trained on or chose with them
    "v50": DATA / "intent_heldout_v50.jsonl",
    "chat37": DATA / "intent_chat_heldout_v37.jsonl",
    # written blind in session 55 (v51 in v50's shape, chat38 in chat37's) and read once in session 56, pooled, as the
    # judge of the forty-third v14 round, the shipped guard and the either raise at band 7, line 2.5, chosen on the
    # read sets v48 to v50 and chat35 to chat37 within the calibration bound (`intent_veto_judge_v51.json`,
    # `_chat38.json`): 41 errors against 41, not shipped; no packaged file chose with them (the vector raise of session
    # 57 trained on them after)
    "v51": DATA / "intent_heldout_v51.jsonl",
    "chat38": DATA / "intent_chat_heldout_v38.jsonl",
    # written blind in session 56 (v52 in v51's shape, chat39 in chat38's) and read once later in it, pooled, as the
    # judge of the forty-fourth v14 round, the shipped guard and the either raise at band 12, line 5
    # (`intent_veto_judge_v52.json`, `_chat39.json`): 38 errors against 37, not shipped; no packaged file chose with
    # them (the vector raise of session 57 trained on them after)
    "v52": DATA / "intent_heldout_v52.jsonl",
    "chat39": DATA / "intent_chat_heldout_v39.jsonl",
    # written blind in session 56 (v53 in v52's shape, chat40 in chat39's) and read once in session 57, pooled, as the
    # judge of the forty-fifth v14 round, the shipped guard and the vector raise fitted on every set above
    # (`intent_veto_judge_v53.json`, `_chat40.json`): 48 errors against 52, shipped; no packaged file trained on them
    "v53": DATA / "intent_heldout_v53.jsonl",
    "chat40": DATA / "intent_chat_heldout_v40.jsonl",
    # written blind in session 57 (v54 in v53's shape, chat41 in chat40's) and read once in session 58, pooled, as the
    # judge of the forty-sixth v14 round, the shipped guard and router 2 (`intent_veto_judge_v54.json`,
    # `_chat41.json`): 39 errors against 41, shipped; no packaged file trained on them
    "v54": DATA / "intent_heldout_v54.jsonl",
    "chat41": DATA / "intent_chat_heldout_v41.jsonl",
    # written blind in session 58 (v55 in v54's shape, chat42 in chat41's) and read once later in that session, pooled,
    # as the judge of the forty-seventh v14 round, the shipped guard and router 3 (`intent_veto_judge_v55.json`,
    # `_chat42.json`): 40 errors each, not shipped; no packaged file trained on them
    "v55": DATA / "intent_heldout_v55.jsonl",
    "chat42": DATA / "intent_chat_heldout_v42.jsonl",
}
# (the packaged vector raise, session 57, trained on every set above up to v52 and chat39: a judge leaves out a row
# equal to one of theirs, `intent_veto_judge.vector_trained_sets`)
# blind sets written and committed but not read yet: in no list above, so no benchmark reads them but the judge
# (`intent_veto_judge.py --set NAME`), once: v56 in v55's shape and chat43 in chat42's, written blind in session 58 by
# two helpers that read only `benchmarks/data/README.md`, for the next round
UNREAD_JUDGES: dict[str, Path] = {
    "v56": DATA / "intent_heldout_v56.jsonl",
    "chat43": DATA / "intent_chat_heldout_v43.jsonl",
}
# the sets that judge the shipped model: a candidate is compared without them (`intent_generalisation.py
# --candidate`), on the development set and the calibration split only
# (v8's judges, set v8 and the chat set, were read twice for v8: for v9 they are the development sets;
# v9's judge, set v9, read once for v9 and its errors studied: for v10 a development set, with v8;
# v10's judge, set v10, read once for v10 and its errors studied: for v11 a development set, with v8 and v9;
# v12's judges, sets v19 and chat6, read once in session 31; sets v21 and chat8 judged candidate L in
# session 34, which did not ship; v13's judges, sets v22 and chat9, read once in session 35, and sets
# v23 and chat10, read once for v13 alone in session 36, and v24 and chat11, read once that session with
# the refitted e5 second opinion; v25 and chat12, read once in session 37 for v13 and candidate W; v26 and
# chat13, read once in session 38 for v13 and candidate N; v27 and chat14, read once in session 40 for the
# second opinion that raises near misses, and v28 and chat15 that session for its veto lines moved with it;
# v29 and chat16, read once in session 41 for the raise reading near misses whole, and v30 and chat17 that session
# for the MiniLM second opinion refitted on v13's rows; v31 and chat18, read once in session 42 for the e5 second
# opinion refitted with twelve spent development sets' rows; v32 and chat19, read once in session 43 for router 2;
# v33 and chat20, read once in session 44 for the MiniLM second opinion refitted with Enron's e-mails weighed up, and
# v34 and chat21 that session for the same refit with chat-wrapped requests weighed up too; v35 and chat22, read once
# in session 45 for the e5 line above the operating point; v36 and chat23, read once in session 46 for the either
# raise as an opt-in; v37, chat24, v38 and chat25, read once in session 47, pooled, for the e5 second opinion refitted
# with twenty-two spent sets, which shipped; v39, chat26, v40 and chat27, read once in session 47, pooled, for the e5
# second opinion refitted with every read set, which shipped; v41, chat28, v42 and chat29, read once in session 48,
# pooled, for the e5 raise reaching 12 logits, which shipped; v43, chat30, v44 and chat31, read once in session 50,
# pooled, for the either raise reaching 8 logits, an opt-in since; v45, chat32, v46 and chat33, read once in session
# 51, pooled, for the either raise for short English queries, which shipped; v47 and chat34, read once in session 52,
# pooled, for the either raise read whole, which shipped; v48 and chat35, read once in session 54 as the thirty-eighth
# round's development sets: nothing packaged trained on or chose with them, so the packaged guard's reading is blind;
# v49 and chat36, read once in session 54, pooled, for EZ1B, which shipped; v50 and chat37, read once in session 55,
# pooled, for MB, which did not; v51 and chat38, read once in session 56, pooled, for the either raise at band 7, which
# did not; v52 and chat39, read once in session 56, pooled, for the either raise at band 12 and line 5, which did not;
# v53 and chat40, read once in session 57, pooled, for the vector raise, which shipped; v54 and chat41, read once in
# session 58, pooled, for router 2, which shipped; v55 and chat42, read once in session 58, pooled, for router 3, which
# tied and did not ship)
JUDGES = ("v22", "chat9", "v23", "chat10", "v24", "chat11", "v25", "chat12", "v26", "chat13", "v27", "chat14")
JUDGES += ("v28", "chat15", "v29", "chat16", "v30", "chat17", "v31", "chat18", "v32", "chat19", "v33", "chat20")
JUDGES += ("v34", "chat21", "v35", "chat22", "v36", "chat23", "v37", "chat24", "v38", "chat25")
JUDGES += ("v39", "chat26", "v40", "chat27")
JUDGES += ("v41", "chat28", "v42", "chat29")
JUDGES += ("v43", "chat30", "v44", "chat31")
JUDGES += ("v45", "chat32", "v46", "chat33")
JUDGES += ("v47", "chat34")
JUDGES += ("v48", "chat35", "v49", "chat36")
JUDGES += ("v50", "chat37")
JUDGES += ("v51", "chat38", "v52", "chat39")
JUDGES += ("v53", "chat40")
JUDGES += ("v54", "chat41")
JUDGES += ("v55", "chat42")


def bucket(text: str) -> int:
    """A stable bucket in [0, 100) from the text (sha1), so splits never depend on file order."""
    return int(hashlib.sha1(" ".join(text.split()).lower().encode("utf-8")).hexdigest()[:8], 16) % 100


def split_of(text: str, train: int, calib: int) -> str:
    b = bucket(text)
    return "train" if b < train else "calib" if b < train + calib else "test"


@dataclass
class Example:
    text: str
    label: int
    style: str
    lang: str
    source: str
    base_style: str = ""  # a chat-wrapped command's own style (`intent_chat.py`), for leave-one-style-out


@dataclass
class Corpus:
    train: list[Example] = field(default_factory=list)
    calib: list[Example] = field(default_factory=list)  # benign only: the operating point
    test: dict[str, list[Example]] = field(default_factory=dict)  # benign test sets by name


def read_rows(path: Path) -> list[dict[str, Any]]:
    """A JSON-lines file's rows, as dicts."""
    return [dict(r) for r in iter_jsonl(path)]


def text_key(text: str) -> str:
    """A text's words, lower case, punctuation dropped: "Thank you." and "thank you" are one text."""
    return " ".join(re.findall(r"\w+", text.lower()))


def unseen(examples: list[Example], corpus: Corpus) -> list[Example]:
    """`examples` less those whose `text_key` is a training or calibration text of `corpus`: short
    stock phrases ("Thank you.", "ok") written independently for a judge and for training are the
    same text, and a judge must not score the model on what it was fitted on."""
    seen = {text_key(e.text) for e in [*corpus.train, *corpus.calib]}
    return [e for e in examples if text_key(e.text) not in seen]


def heldout_trained_on(model: IntentModel) -> tuple[str, ...]:
    """The held-apart sets a model file says it trained on, whole or only their rows not in English (its
    metadata, as `train_intent.main` writes it): either way a judge of it no more."""
    meta = model.meta
    return (*meta.get("heldout_sets_trained_on", []), *meta.get("heldout_sets_non_english_rows_trained_on", []))


def heldout_requests_trained_on(model: IntentModel) -> tuple[str, ...]:
    """The held-apart sets of which a model trained on the requests alone (`--request-heldout`, session 39):
    their benign rows still judge it, their requests no more."""
    return tuple(model.meta.get("heldout_sets_requests_trained_on", []))


def heldout_request_languages(model: IntentModel) -> str:
    """Which requests of those sets it trained on: "all", or "non-english" (those not labelled English)."""
    return str(model.meta.get("heldout_requests_languages", "all"))


def heldout_benign_name(version: str) -> str:
    """The name its benign rows are reported under: "heldout-hard" (v1), "heldout-<v>-hard", and
    "heldout-chat" for the chat-turn set, whose benign rows are ordinary chat, not hard benign."""
    return (
        "heldout-hard"
        if version == "v1"
        else f"heldout-{version}"
        if version.startswith("chat")
        else f"heldout-{version}-hard"
    )


def heldout(path: Path = HELDOUT) -> list[Example]:
    """A held-apart set written before training (never trained, tuned or calibrated on). The first
    set (`HELDOUT`) was read once to diagnose model v1; set v2 was written before v2, v3 before
    v3, v4 before any v4 training change, v5 before any v5 one (and read only for the one v5
    candidate chosen without it), v6 before any v6 one (read only for the chosen v6 candidate
    and v5); `HELDOUT_SETS` says what each later one was read for. From v6, sets v1-v4 are training rows
    (`train_intent.TRAIN_HELDOUT`) and set v5 the development set."""
    return [
        Example(r["text"], 1 if r["label"] == "attack" else 0, r["style"], r["lang"], "heldout")
        for r in read_rows(path)
    ]
