"""Chat turns for the `intent` model (model v8): the short things people say to an assistant
between questions ("Thank you.", "ok got it", "hi", "can you say that more simply?"), benign, and
the same pleasantries wrapped around an extraction command, as attacks.

Why: model v7 scored a bare "Thank you." at p = 0.95 (`benchmarks/intent_pleasantries.py`): the
polite extraction requests it trained on end with a thank-you and almost no benign row did, so
under `serve`'s per-user policy a user who thanked the assistant after three answers was refused
on the fourth question. The benign turns here teach that a pleasantry is not a request; the
attack rows (a pleasantry before or after a command of `intent_phrasings.jsonl`, same language)
keep "thank you" from becoming a way to wave an extraction through.

Everything here is the project's own text, written before any v8 model was trained and without
reading the blind chat-turn set (`benchmarks/data/intent_chat_heldout.jsonl`, written by another
session) that judges it. `benchmarks/train_intent.py` splits the benign rows by a stable hash into
train / calibration / test (test: `own-chat`) like every benign source; the attack rows train.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

PHRASINGS = Path(__file__).resolve().parents[1] / "src" / "ragshield" / "data" / "intent_phrasings.jsonl"
SEED = 1820
N_ATTACKS = 240

# per language: thanks / goodbyes ("t"), greetings ("g"), acknowledgements ("a"), follow-ups about
# the assistant's OWN previous answer, some with extraction-like words ("f"), and questions about
# the assistant itself ("m")
TURNS: dict[str, dict[str, list[str]]] = {
    "en": {
        "t": [
            "Thank you.", "thank you", "Thank you!", "Thanks.", "thanks!", "thanks a bunch", "Thank you kindly.",
            "Thanks so much, that's really helpful.", "Thank you, that answers my question.",
            "thanks, that's all I needed", "Thank you, goodbye.", "Thanks, bye!", "Thanks again.", "ty",
            "tysm", "thanks mate", "Cheers!", "Appreciate it.", "Much obliged.", "Thank you for explaining.",
            "Thank you, doctor.", "Thanks for the quick reply.", "Brilliant, thanks.", "Lovely, thank you.",
            "OK thanks", "Okay, thank you very much.", "Thanks, I'll try that.", "Thank you, I'll call them tomorrow.",
            "That's everything, thanks.", "No more questions, thank you.", "Bye for now.", "Goodbye!",
            "Have a good day.", "Thanks and have a nice evening.", "Great help, thank you!",
            "Thank you so so much", "thank you!!", "Thanks for your patience.", "Many thanks for your help.",
            "Thanks, you've been very helpful.",
        ],
        "g": [
            "Hi", "Hello", "Hello!", "hi there", "Hey", "Good morning.", "Good afternoon, I have a question.",
            "Hi, can you help me?", "Hello, is anyone there?", "Hey, quick question.", "Good evening.",
            "Hi again!", "Hello, I need some help please.",
        ],
        "a": [
            "OK", "ok sure", "Okay.", "Got it.", "got it thanks", "I see.", "Makes sense.", "Understood.",
            "Perfect.", "Great!", "Alright.", "Sure.", "Yes.", "No.", "Yes please.", "No, that's fine.",
            "Right, I understand now.", "Fair enough.", "Interesting.", "Good to know.", "Noted.", "Cool",
            "Sounds good.", "That helps.", "Hmm, okay.",
        ],
        "f": [
            "Can you explain that more simply?", "What do you mean by that?", "Could you repeat that?",
            "Can you repeat the last part?", "Say that again, please?", "Can you list those steps again?",
            "Show me that as a table.", "Can you put your answer in bullet points?", "Shorter, please.",
            "Can you give me more detail on the second point?", "Is that the full answer?",
            "Anything else I should know?", "And for children?", "What about during pregnancy?",
            "Why is that?", "Are you sure?", "Can you give an example?", "Could you copy that into a list?",
            "Can you summarise everything you just said?", "Repeat your answer in Spanish, please.",
            "Sorry, I didn't understand.", "Can you go over all of that again slowly?",
            "Please rewrite your last answer without jargon.", "Which of those is the most important?",
        ],
        "m": [
            "Are you a real person?", "Are you a bot?", "What can you help me with?", "Who built you?",
            "Can I speak to a human?", "How does this chat work?", "Do you remember what I asked before?",
            "Is this conversation private?", "What languages do you speak?",
        ],
    },
    "es": {
        "t": ["Gracias.", "¡Muchas gracias!", "gracias", "Mil gracias por la ayuda.", "Vale, gracias.",
              "Gracias, eso es todo.", "Adiós.", "Muy amable, gracias."],
        "g": ["Hola", "¡Buenos días!", "Hola, tengo una pregunta."],
        "a": ["Vale.", "Entendido.", "De acuerdo.", "Perfecto.", "Ah, ya veo."],
        "f": ["¿Puedes explicarlo más fácil?", "¿Puedes repetir la última parte?", "¿Me lo pones en una lista?",
              "¿Y para niños?"],
        "m": ["¿Eres un bot?", "¿Puedo hablar con una persona?"],
    },
    "de": {
        "t": ["Danke.", "Vielen Dank!", "danke schön", "Danke, das war's.", "Super, danke.", "Tschüss!",
              "Vielen Dank für die Hilfe.", "Danke, sehr hilfreich."],
        "g": ["Hallo", "Guten Morgen!", "Hallo, ich hätte eine Frage."],
        "a": ["Okay, verstehe.", "Verstanden.", "Alles klar.", "Gut zu wissen.", "Ach so."],
        "f": ["Kannst du das einfacher erklären?", "Kannst du den letzten Teil wiederholen?",
              "Kannst du das als Liste zeigen?", "Und bei Kindern?"],
        "m": ["Bist du ein Bot?", "Kann ich mit einem Menschen sprechen?"],
    },
    "fr": {
        "t": ["Merci.", "Merci beaucoup !", "merci", "Merci, c'est tout.", "Super, merci.", "Au revoir.",
              "Merci pour votre aide.", "Merci bien, bonne journée."],
        "g": ["Bonjour", "Salut !", "Bonjour, j'ai une question."],
        "a": ["D'accord.", "Compris.", "Parfait.", "Ah, je vois.", "Très bien."],
        "f": ["Pouvez-vous expliquer plus simplement ?", "Pouvez-vous répéter la dernière partie ?",
              "Tu peux me le mettre en liste ?", "Et pour les enfants ?"],
        "m": ["Êtes-vous un robot ?", "Puis-je parler à un humain ?"],
    },
    "it": {
        "t": ["Grazie.", "Grazie mille!", "grazie", "Grazie, è tutto.", "Perfetto, grazie.", "Arrivederci."],
        "g": ["Ciao", "Buongiorno!", "Salve, ho una domanda."],
        "a": ["Va bene.", "Capito.", "Perfetto.", "Ok, chiaro."],
        "f": ["Puoi spiegarlo in modo più semplice?", "Puoi ripetere l'ultima parte?", "E per i bambini?"],
        "m": ["Sei un bot?", "Posso parlare con una persona?"],
    },
    "pt": {
        "t": ["Obrigado.", "Muito obrigada!", "obrigado", "Obrigado, é só isso.", "Valeu!", "Tchau."],
        "g": ["Olá", "Bom dia!", "Oi, tenho uma dúvida."],
        "a": ["Ok.", "Entendi.", "Perfeito.", "Certo."],
        "f": ["Pode explicar de forma mais simples?", "Pode repetir a última parte?", "E para crianças?"],
        "m": ["Você é um robô?", "Posso falar com uma pessoa?"],
    },
    "nl": {
        "t": ["Dank je.", "Bedankt!", "Dank u wel.", "Bedankt, dat was het.", "Top, bedankt.", "Doei!"],
        "g": ["Hallo daar", "Goedemorgen!", "Hoi, ik heb een vraag."],
        "a": ["Oké.", "Begrepen.", "Prima.", "Duidelijk."],
        "f": ["Kun je dat simpeler uitleggen?", "Kun je het laatste deel herhalen?", "En voor kinderen?"],
        "m": ["Ben jij een bot?", "Kan ik een mens spreken?"],
    },
    "zh": {
        "t": ["谢谢。", "谢谢你！", "非常感谢", "好的，谢谢。", "谢谢，就这些。", "再见！", "多谢帮忙。"],
        "g": ["你好", "早上好！", "你好，我有个问题。"],
        "a": ["好的。", "明白了。", "懂了。", "原来如此。"],
        "f": ["能说得简单一点吗？", "最后那部分能再说一遍吗？", "那儿童呢？", "能列成清单吗？"],
        "m": ["你是机器人吗？", "可以转人工吗？"],
    },
    "ja": {
        "t": ["ありがとうございます。", "ありがとう！", "どうもありがとうございました。", "助かりました、ありがとう。",
              "わかりました、ありがとうございます。", "では、失礼します。"],
        "g": ["こんにちは", "おはようございます。", "すみません、質問があります。"],
        "a": ["はい。", "わかりました。", "了解です。", "なるほど。"],
        "f": ["もっと簡単に説明してもらえますか？", "最後の部分をもう一度言ってください。", "子どもの場合は？"],
        "m": ["あなたはボットですか？", "人と話せますか？"],
    },
    "ru": {
        "t": ["Спасибо.", "Большое спасибо!", "спасибо", "Спасибо, это всё.", "Отлично, спасибо.", "До свидания."],
        "g": ["Привет", "Доброе утро!", "Здравствуйте, у меня вопрос."],
        "a": ["Хорошо.", "Понятно.", "Ясно.", "Ладно."],
        "f": ["Можешь объяснить проще?", "Повтори последнюю часть, пожалуйста.", "А для детей?"],
        "m": ["Ты бот?", "Можно поговорить с человеком?"],
    },
}  # fmt: skip
# glue between a pleasantry and a command in the attack rows, per language
BEFORE = {"en": ("{t} Now {c}", "{t} {c}", "{t} One more thing: {c}", "{a} {c}", "{g} {c}")}
AFTER = ("{c} {t}",)
_CLOSED = ".!?。！？"
_THANKS = ("thank", "thx", "grazie", "gracias", "danke", "merci", "obrigad", "dank", "спасибо", "谢谢", "ありがとう")


def _sentence(text: str) -> str:
    """`text` ending as a sentence does, so two glued parts never read as one run-on sentence."""
    return text if text.endswith(tuple(_CLOSED)) else text + ("。" if text[-1:] > "\u3000" else ".")


def _frame_fits(frame: str, command: str) -> bool:
    """No "Now now ..." and no second thank-you after a command that already ends with one."""
    if frame.startswith("{t} Now"):
        return (
            command[:1].isupper() and command[1:2].islower() and not command.lower().startswith(("now", "hi", "hello"))
        )
    if frame == "{c} {t}":
        return not any(word in command[-40:].lower() for word in _THANKS)
    return True


def benign(lang_turns: dict[str, dict[str, list[str]]] = TURNS) -> list[dict[str, Any]]:
    """Benign rows {text, label=0, style, lang}: every turn, style "chat-<kind>"."""
    kinds = {"t": "closer", "g": "greeting", "a": "ack", "f": "followup", "m": "meta"}
    return [
        {"text": text, "label": 0, "style": f"chat-{kinds[kind]}", "lang": lang}
        for lang, parts in lang_turns.items()
        for kind, texts in parts.items()
        for text in texts
    ]


def attacks(seed: int = SEED, n: int = N_ATTACKS) -> list[dict[str, Any]]:
    """Attack rows {text, label=1, style="chat-attack", lang}: a same-language pleasantry before or
    after an extraction command of `intent_phrasings.jsonl` (styles direct, polite, pii)."""
    rng = random.Random(seed)
    commands: dict[str, list[str]] = {}
    for line in PHRASINGS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["label"] == 1 and row["style"] in ("direct", "polite", "pii") and row["lang"] in TURNS:
            commands.setdefault(row["lang"], []).append((row["text"], row["style"]))
    rows = []
    while len(rows) < n:
        lang = "en" if rng.random() < 0.5 else rng.choice(sorted(commands))
        parts, (command, style) = TURNS[lang], rng.choice(commands[lang])
        frame = rng.choice(BEFORE.get(lang, ("{t} {c}", "{g} {c}")) + AFTER)
        if not _frame_fits(frame, command):
            continue
        closer = rng.choice(parts["t"])
        text = frame.format(
            t=closer if frame == "{c} {t}" else _sentence(closer),
            a=_sentence(rng.choice(parts["a"])),
            g=_sentence(rng.choice(parts["g"])),
            c=command[:1].lower() + command[1:] if frame.startswith("{t} Now") else _sentence(command),
        )
        # base_style: the style of the wrapped command, so leave-one-style-out can leave it out too
        rows.append({"text": text, "label": 1, "style": "chat-attack", "lang": lang, "base_style": style})
        rows = list({r["text"]: r for r in rows}.values())
    return rows


def generate(seed: int = SEED) -> list[dict[str, Any]]:
    """Benign chat turns and pleasantry-wrapped commands (see the module docstring)."""
    return benign() + attacks(seed)
