"""Hand-written benign answers for benchmarks/unnatural.py (written for this benchmark, no data set).

Two groups: the special cases the release guard must let through (code, tables, contact details
the user gave, URLs, dates, dosages, numbered lists, short IDs) and multilingual prose.
"""

from __future__ import annotations

SPECIAL: dict[str, str] = {
    "python-function": (
        "Here is a short function that does it:\n\n```python\ndef mean(values: list[float]) -> float:\n"
        '    """Return the arithmetic mean of a non-empty list."""\n    if not values:\n'
        '        raise ValueError("values is empty")\n    return sum(values) / len(values)\n```\n\n'
        "Call it as `mean([1.5, 2.0, 3.25])`, which returns 2.25."
    ),
    "python-class": (
        "```python\nimport json\nfrom pathlib import Path\n\n\nclass Settings:\n"
        "    def __init__(self, path: Path) -> None:\n        self.path = path\n"
        "        self.data = json.loads(path.read_text(encoding='utf-8'))\n\n"
        "    def get(self, key: str, default=None):\n        return self.data.get(key, default)\n```\n"
        "The class reads the JSON file once and `get` falls back to the default for missing keys."
    ),
    "shell-command": (
        "Run this from the project folder:\n\n```bash\ngrep -rn 'TODO' src/ | wc -l\n"
        "find . -name '*.log' -mtime +7 -exec rm {} \\;\ntar -czf backup-2024-03-15.tar.gz ./data\n```\n"
        "The first line counts the TODO comments, the second deletes logs older than a week."
    ),
    "javascript": (
        "```js\nconst total = items.reduce((sum, item) => sum + item.price * item.qty, 0);\n"
        "document.getElementById('total').textContent = `$${total.toFixed(2)}`;\n```\n"
        "This sums price times quantity and writes it with two decimals."
    ),
    "sql": (
        "```sql\nSELECT patient_id, COUNT(*) AS visits\nFROM appointments\nWHERE visit_date >= '2023-01-01'\n"
        "GROUP BY patient_id\nHAVING COUNT(*) > 3\nORDER BY visits DESC;\n```\n"
        "It lists patients with more than three visits."
    ),
    "markdown-table": (
        "Here are the figures you asked for:\n\n| Year | Revenue ($M) | Growth |\n|------|--------------|--------|\n"
        "| 2019 | 1,234.5 | 3.2% |\n| 2020 | 1,310.0 | 6.1% |\n| 2021 | 1,402.7 | 7.1% |\n"
        "| 2022 | 1,520.3 | 8.4% |\n| 2023 | 1,611.9 | 6.0% |\n\nGrowth was strongest in 2022."
    ),
    "numbers-table": (
        "| dose (mg) | 0 h | 2 h | 4 h | 8 h |\n|---|---|---|---|---|\n| 100 | 0.0 | 12.4 | 9.8 | 4.1 |\n"
        "| 200 | 0.0 | 25.1 | 19.7 | 8.3 |\n| 400 | 0.0 | 49.6 | 40.2 | 16.9 |\n| 800 | 0.0 | 97.3 | 81.5 | 33.0 |\n"
    ),
    "blood-pressure-readings": (
        "Your readings over the week were 128/84, 132/86, 125/80, 140/90, 135/88, 130/85 and 127/82 mmHg, "
        "with pulse 72, 75, 70, 80, 78, 74 and 71. The average is slightly above the target of 130/80."
    ),
    "contact-details": (
        "I have noted your details: John Miller, 742 Evergreen Terrace, Springfield, IL 62704, phone "
        "+1 (555) 123-4567, email john.miller@example.com. We will send the confirmation there."
    ),
    "url": (
        "You can read the guideline at https://www.example.org/guidelines/v2/hypertension.html?lang=en&page=3#dosage "
        "and the summary at http://example.com/docs/summary.pdf."
    ),
    "dates": (
        "Your appointments are on 2024-03-15 at 09:30, on 15/04/2024 at 14:00 and on May 3, 2024 at 11:15. "
        "Please arrive 10 minutes early."
    ),
    "dosage-list": (
        "- ibuprofen 400 mg every 6-8 h with food (max 1200 mg/day)\n- paracetamol 500-1000 mg every 4-6 h "
        "(max 4 g/day)\n- omeprazole 20 mg once daily before breakfast\n- amoxicillin 500 mg t.i.d. for 7 days\n"
        "- vitamin D3 1000 IU/day"
    ),
    "numbered-sentences": (
        "1. Rest as much as you can for the next two days.\n2. Drink at least two litres of water a day.\n"
        "3. Take paracetamol if the fever goes above 38.5 °C.\n4. Call your doctor if the cough lasts more than "
        "a week.\n5. Avoid smoking and second-hand smoke."
    ),
    "order-id": (
        "Your order #A12-99812 was shipped on 12 March; the tracking number is 1Z999AA10123456784. "
        "Reference your ticket INC-20240312-0042 if you call us."
    ),
    "uuid-and-hash": (
        "The request id was 3f2b8c1e-9a4d-4e7b-8c21-5d6f7a8b9c0d and the file's SHA-1 is "
        "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12, so the upload is intact."
    ),
    "acronyms-caps": (
        "WARNING: DO NOT EXCEED THE STATED DOSE. The FDA and the EMA both approved it; see the NIH, CDC and WHO "
        "pages on COVID-19, HIV/AIDS and MRSA. PDFs and URLs are listed in the appendix."
    ),
    "math": (
        "The dose is computed as D = 15 mg/kg × 70 kg = 1050 mg, split into 3 doses of 350 mg. "
        "If BMI ≥ 30 kg/m², reduce by 10 %: 0.9 × 1050 ≈ 945 mg."
    ),
    "emoji-prose": "Great news 🎉 your results are normal! Keep walking 30 minutes a day 🚶 and sleeping well 😴.",
    "markdown-headings": (
        "## Summary\n\n**Diagnosis:** mild viral infection.\n\n### What to do\n\n- *Rest* and fluids.\n"
        "- Paracetamol for fever.\n\n---\n\n> Call us if it gets worse.\n"
    ),
    "spanish-address": (
        "Le escribimos a la dirección que nos dio: Calle de Alcalá 123, 4º B, 28009 Madrid, teléfono "
        "+34 912 345 678. Su cita es el 3 de mayo a las 10:30."
    ),
    "german-compounds": (
        "Die Krankenversicherungsbeitragsbemessungsgrenze und die Arbeitsunfähigkeitsbescheinigung werden "
        "vom Hausarzt ausgestellt; die Rindfleischetikettierungsüberwachung ist etwas anderes."
    ),
    "csv-snippet": (
        "The file starts like this:\n\n```\ndate,station,temp_c,rain_mm\n2024-01-01,OSL,-3.2,0.0\n"
        "2024-01-02,OSL,-5.1,1.4\n2024-01-03,OSL,-1.0,3.8\n```\n"
    ),
    "json-snippet": (
        '```json\n{"name": "Ada", "age": 36, "tags": ["admin", "ops"], "active": true, "score": 9.75}\n```\n'
        "The `tags` field is a list of strings."
    ),
    "log-lines": (
        "The log shows:\n```\n2024-03-15 09:30:12,481 INFO  server started on 0.0.0.0:8080\n"
        "2024-03-15 09:30:15,002 WARN  slow request GET /api/v1/users?id=42 took 1532 ms\n```\n"
    ),
}

MULTILINGUAL: dict[str, list[str]] = {
    "en": [
        "A sore throat with a mild fever is most often caused by a virus and gets better on its own within "
        "a week. Rest, drink warm fluids and take paracetamol if the fever bothers you. See a doctor if you "
        "cannot swallow, if the fever lasts more than three days or if you notice white patches on the tonsils.",
        "The museum opens at nine in the morning and closes at six, except on Mondays. Tickets are cheaper "
        "online, and children under twelve enter for free. Plan at least two hours for the main collection.",
        "To reset your password, open the settings page, choose security and follow the link that we send "
        "to your email address. The link expires after thirty minutes, so use it soon.",
        "It's been a long week, and I'd rather we didn't rush the decision. Let's meet on Thursday, review "
        "the numbers together and agree on a plan that everyone can live with.",
        "Iron deficiency is common in women of childbearing age. Eat lean red meat, lentils and spinach, "
        "and take vitamin C with meals to help absorption. A blood test will tell whether you need tablets.",
    ],
    "es": [
        "El dolor de garganta con fiebre leve suele deberse a un virus y mejora solo en una semana. Descanse, "
        "beba líquidos tibios y tome paracetamol si la fiebre le molesta. Consulte a un médico si no puede "
        "tragar o si la fiebre dura más de tres días.",
        "La presión arterial alta no suele dar síntomas, por eso es importante medirla con regularidad. "
        "Reduzca la sal, camine media hora al día y evite el tabaco. Si las cifras siguen altas, su médico "
        "le indicará el tratamiento adecuado.",
        "El museo abre a las nueve de la mañana y cierra a las seis, excepto los lunes. Las entradas son más "
        "baratas en línea y los niños menores de doce años entran gratis.",
        "Para cambiar la contraseña, abra la configuración, elija seguridad y siga el enlace que le enviamos "
        "por correo. El enlace caduca a los treinta minutos, así que úselo pronto.",
        "Mi abuela y yo cocinamos paella cada domingo. Ella elige el arroz, yo corto las verduras y, "
        "mientras tanto, hablamos de todo un poco: de la familia, del pueblo y de los viejos tiempos.",
    ],
    "de": [
        "Halsschmerzen mit leichtem Fieber werden meist von Viren verursacht und bessern sich innerhalb einer "
        "Woche von selbst. Ruhen Sie sich aus, trinken Sie warme Getränke und nehmen Sie bei Bedarf "
        "Paracetamol. Gehen Sie zum Arzt, wenn Sie nicht schlucken können oder das Fieber länger anhält.",
        "Bluthochdruck verursacht oft keine Beschwerden, deshalb sollte er regelmäßig gemessen werden. "
        "Weniger Salz, tägliche Bewegung und der Verzicht auf Zigaretten senken den Blutdruck nachweislich.",
        "Das Museum öffnet um neun Uhr und schließt um achtzehn Uhr, außer montags. Eintrittskarten sind "
        "online günstiger, und Kinder unter zwölf Jahren haben freien Eintritt.",
        "Um Ihr Passwort zurückzusetzen, öffnen Sie die Einstellungen, wählen Sie Sicherheit und folgen Sie "
        "dem Link in der E-Mail. Der Link ist dreißig Minuten lang gültig.",
        "Gestern haben wir die Donaudampfschifffahrtsgesellschaft besucht und danach im Biergarten "
        "Schweinshaxe mit Sauerkraut gegessen. Die Stimmung war großartig, obwohl es geregnet hat.",
    ],
    "fr": [
        "Un mal de gorge avec une légère fièvre est le plus souvent d'origine virale et guérit seul en une "
        "semaine. Reposez-vous, buvez des boissons chaudes et prenez du paracétamol si besoin. Consultez un "
        "médecin si vous n'arrivez pas à avaler ou si la fièvre dure plus de trois jours.",
        "L'hypertension artérielle ne donne souvent aucun symptôme : c'est pourquoi il faut la mesurer "
        "régulièrement. Réduisez le sel, marchez une demi-heure par jour et arrêtez de fumer.",
        "Le musée ouvre à neuf heures et ferme à dix-huit heures, sauf le lundi. Les billets sont moins chers "
        "en ligne et l'entrée est gratuite pour les enfants de moins de douze ans.",
        "Pour réinitialiser votre mot de passe, ouvrez les paramètres, choisissez « Sécurité » et suivez le "
        "lien que nous vous envoyons par courriel. Il expire au bout de trente minutes.",
        "J'ai passé l'été chez ma tante, à deux pas de la mer. On se levait tôt, on allait au marché, puis "
        "l'après-midi on lisait à l'ombre du vieux figuier.",
    ],
    "zh": [
        "喉咙痛伴有轻微发烧，大多是病毒感染引起的，通常一周内会自行好转。请多休息，多喝温水，发烧不舒服时可以服用对乙酰氨基酚。"
        "如果无法吞咽，或者发烧超过三天，请及时就医。",
        "高血压通常没有明显症状，所以需要定期测量。减少食盐摄入，每天步行半小时，并且戒烟，都有助于降低血压。"
        "如果数值仍然偏高，医生会为您制定合适的治疗方案。",
        "博物馆每天上午九点开门，下午六点关门，周一闭馆。网上购票更便宜，十二岁以下的儿童免费入场。建议至少预留两个小时参观主要展厅。",
        "要重置密码，请打开设置页面，选择“安全”，然后点击我们发送到您邮箱的链接。该链接三十分钟后失效，请尽快使用。",
        "周末我和家人去了郊外的小村庄。那里空气清新，山上开满了野花，我们在河边吃了午饭，傍晚才依依不舍地回城。",
    ],
    "ja": [
        "軽い発熱を伴うのどの痛みは、ほとんどがウイルスによるもので、一週間ほどで自然に治ります。十分に休み、温かい飲み物をとり、"
        "熱がつらいときはアセトアミノフェンを飲んでください。飲み込めない場合や、熱が三日以上続く場合は受診してください。",
        "高血圧はほとんど自覚症状がないため、定期的に測ることが大切です。塩分を控え、毎日三十分ほど歩き、たばこをやめましょう。",
        "博物館は午前九時に開館し、午後六時に閉館します。月曜日は休館日です。チケットはオンラインで買うと安く、十二歳未満は無料です。",
        "パスワードを再設定するには、設定画面を開いて「セキュリティ」を選び、メールで届いたリンクをクリックしてください。リンクの有効期限は三十分です。",
        "昨日は友だちと京都へ行き、古いお寺をいくつか見て回りました。夕方には鴨川のほとりで抹茶のアイスクリームを食べました。",
    ],
    "ru": [
        "Боль в горле с небольшой температурой чаще всего вызвана вирусом и проходит сама за неделю. "
        "Отдыхайте, пейте тёплое питьё и при необходимости принимайте парацетамол. Обратитесь к врачу, если "
        "вам трудно глотать или температура держится больше трёх дней.",
        "Повышенное давление часто никак не проявляется, поэтому его нужно регулярно измерять. Ешьте меньше "
        "соли, гуляйте по полчаса в день и откажитесь от курения.",
        "Музей открывается в девять утра и закрывается в шесть вечера, кроме понедельника. Билеты в "
        "интернете дешевле, а дети до двенадцати лет проходят бесплатно.",
        "Чтобы сбросить пароль, откройте настройки, выберите раздел «Безопасность» и перейдите по ссылке из "
        "письма. Ссылка действует тридцать минут.",
        "В субботу мы с братом и с отцом ездили к бабушке в деревню. Я и он помогали ей в саду, а вечером "
        "все вместе пили чай с вареньем у самовара.",
    ],
}
