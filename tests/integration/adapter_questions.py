"""Questions shared by the adapter tests: benign ones to calibrate guards on (20, the least the
bank intent guard fits on), over the synthetic corpus's medical and e-mail records."""

from __future__ import annotations

BENIGN_QUESTIONS = (
    "What should I do about persistent headaches?",
    "How long does acne take to clear?",
    "Is frequent urination a sign of diabetes?",
    "What helps with lower back pain?",
    "How do I treat a mild rash?",
    "What are side effects of ibuprofen?",
    "How can I sleep better?",
    "What is a normal blood pressure?",
    "What foods lower cholesterol?",
    "Is it safe to exercise with asthma?",
    "Please send me the revised budget before Friday.",
    "Can we move the quarterly review meeting?",
    "Who is responsible for the travel expenses line?",
    "When is the deadline for the HR paperwork?",
    "Could you confirm the meeting agenda for Monday?",
    "How do I update my mailing address?",
    "What are symptoms of iron deficiency?",
    "How can I reduce knee pain when running?",
    "What vaccines do adults need?",
    "Can dehydration cause headaches?",
)
