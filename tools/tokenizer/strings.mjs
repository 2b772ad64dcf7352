// The strings cairn's tokenizer fixtures cover: many scripts, emoji, CJK,
// combining marks, white-space runs, long digit runs, code, special-token text
// inline, and invalid UTF-8 (as byte arrays). Deterministic: same list every run.

const scripts = [
  "Hello world", "hello World!", "HELLO WORLD", "The quick brown fox jumps over the lazy dog.",
  "I'm sure you'll see they've done it; she'd said we're ready.", "DON'T YOU'LL WE'VE I'D",
  "Bonjour, ça va? Très bien, merci!", "Straße, Fußgänger, Größe", "Ærøskøbing på Ærø",
  "¿Dónde está la biblioteca?", "Ünïcödé tëxt wïth dïäërësïs", "Češký Krumlov, Łódź, Kraków",
  "Привет, как дела?", "Съешь же ещё этих мягких французских булок", "Ελληνικά: Καλημέρα κόσμε",
  "שלום עולם", "مرحبا بالعالم", "السلام عليكم ورحمة الله", "سلام دنیا", "नमस्ते दुनिया",
  "हिन्दी में लिखा गया वाक्य", "বাংলা ভাষা", "தமிழ் மொழி", "తెలుగు", "ಕನ್ನಡ", "മലയാളം",
  "ગુજરાતી", "ਪੰਜਾਬੀ", "සිංහල", "ภาษาไทยง่ายนิดเดียว", "ພາສາລາວ", "မြန်မာဘာသာ", "ខ្មែរ",
  "ქართული ენა", "Հայերեն", "አማርኛ", "ᐃᓄᒃᑎᑐᑦ", "ᚠᚢᚦᚨᚱᚲ", "Tiếng Việt có dấu", "Türkçe ığüşöç",
  "你好，世界！", "我们今天去公园散步吧。", "中文繁體字測試", "日本語のテキストです。", "ひらがなカタカナ漢字",
  "ｶﾀｶﾅ半角", "한국어 텍스트입니다", "안녕하세요 세계", "Mixed 中文 and English 文字",
  "東京タワーは333メートル", "𠜎𠜱𠝹𠱓 rare CJK extension B", "Ｆｕｌｌｗｉｄｔｈ　ｔｅｘｔ",
  "😀", "😀😃😄😁", "Emoji 🎉 party 🥳!", "👨‍👩‍👧‍👦 family", "👍🏽 thumbs", "🇫🇷🇯🇵🇺🇸 flags",
  "❤️ heart with VS16", "🏳️‍🌈", "✈️✌🏿☝️", "🤖 robots 🦾", "⌚⌛⏰", "🧑🏻‍💻 coder",
  "e\u0301 combining acute", "n\u0303o\u0308", "a\u0300\u0301\u0302\u0303\u0304 stacked",
  "Ǹ̵̡̛̫̰ͣ͗ zalgo", "\u0915\u094d\u0937", "Å vs A\u030A", "ﬁ ligature ﬀ ﬃ", "½ ¼ ¾ ² ³ ¹",
  "Ⅻ roman Ⅳ", "™ © ® ℃ ℉ №", "ℌ𝔢𝔩𝔩𝔬 math fraktur", "𝐁𝐨𝐥𝐝 𝑰𝒕𝒂𝒍𝒊𝒄", "⁰¹²³⁴⁵⁶⁷⁸⁹",
  "Price: $19.99, €20, £15, ¥2000, ₹500, ₿0.01", "100% sure!!! ??? ...", "a—b–c−d",
  "«quotes» „German“ ‘single’ “double”", "…ellipsis…", "• bullet · middle dot",
  "email@example.com", "https://example.com/path?query=1&b=2#frag", "C:\\Users\\name\\file.txt",
  "#hashtag @mention", "snake_case camelCase PascalCase kebab-case", "ALLCAPS lowercase MiXeD",
  "x=1;y=2", "a+b=c", "3.14159", "-42", "1e10", "0xFF", "0b1010", "v1.2.3-beta+build",
  "U.S.A.", "e.g., i.e., etc.", "Mr. Smith's car", "rock 'n' roll", "'quoted'", "\"double\"",
  "tab\tseparated\tvalues", "line1\nline2\nline3", "windows\r\nnewlines\r\n", "form\ffeed",
  "vertical\vtab", "nbsp\u00a0here", "ideographic\u3000space", "zero\u200bwidth", "en\u2002space",
  "thin\u2009space", "line\u2028separator", "para\u2029separator", "bom\ufeffinside",
  "soft\u00adhyphen", "rtl\u200fmark", "ltr\u200emark", "word\u2060joiner", "\u0000nul",
  "control\u0001\u0002\u0003", "del\u007f", "c1\u0085next", "private\ue000use", "\ufffd replacement",
  "max\u{10FFFF}plane", "surrogate-free 𝄞 music", "Σίσυφος", "ΑΒΓ αβγ", "İstanbul ıi",
  "ǅ titlecase", "ß SS ẞ", "K Kelvin sign", "Ω ohm", "ﬆ", "ŉ",
];

const special = [
  "<|endoftext|>", "<|im_start|>user\nHello<|im_end|>", "<s>Hello</s>", "<s> Hello </s>",
  "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
  "<start_of_turn>user\nHi<end_of_turn>", "<bos>text", "<think>reasoning</think>answer",
  "text <|endoftext|> more", "a<|im_end|>b", "<tool_call>{\"a\":1}</tool_call>", "<unk>", "<pad>",
  "<|user|>\nHi<|end|>\n<|assistant|>", "<|system|>", "< s >", "<|not_a_token|>", "<<>>",
  "<|im_start|><|im_start|>", " <|im_start|> ", "\n<|im_end|>\n", "<mask> masked", "[multimodal]",
  "<unused0>", "<|fim_prefix|>def<|fim_suffix|>ret<|fim_middle|>", "</s></s>", "<s><s>",
  "<|reserved_special_token_5|>", "<image_soft_token>", "<end_of_turn>\n<start_of_turn>model\n",
];

const code = [
  "def foo(x):\n    return x * 2\n", "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}",
  "#include <stdio.h>\nint main() { printf(\"hi\\n\"); }", "const f = (a, b) => a ?? b;",
  "SELECT * FROM users WHERE id = 42;", "<div class=\"x\">Hello</div>", "{\"key\": [1, 2, 3], \"n\": null}",
  "fn main() -> Result<(), Box<dyn Error>> { Ok(()) }", "if x == None:\n        pass\n    else:\n        x += 1",
  "$ ls -la | grep '^d' > out.txt 2>&1", "    indented four\n        eight\n", "a = b ? c : d; // comment",
  "/* block\n   comment */", "std::vector<std::string> v{\"a\", \"b\"};", "x<<=2; y>>=3; z**=4",
  "print(f'{name!r:>10}')", "@decorator\nclass A(B, metaclass=M): ...", "#!/usr/bin/env bash\nset -euo pipefail",
  "matrix[i][j] += 1e-6", "git commit -m \"fix: bug #123\"", "```python\nprint(1)\n```",
  "<?xml version=\"1.0\"?><a b='c'/>", "\\begin{equation} E = mc^2 \\end{equation}", "lambda x: x**2",
  "let mut v: Vec<u8> = Vec::with_capacity(1024);", "0x7fffffff & ~mask | (1 << 31)", "  \t  \n\n  ",
  "else if(a&&b||!c){}", "i++;--j;k+=1;", "}}}]]]))) ((([[[{{{",
];

function whitespace() {
  const out = [];
  for (const ws of [" ", "\t", "\n", "\r\n", " \n", "\u3000", "\u00a0"]) {
    for (const n of [1, 2, 3, 4, 7, 16]) {
      const run = ws.repeat(n);
      out.push(run, `a${run}b`, `${run}word`, `word${run}`);
    }
  }
  out.push("   leading", "trailing   ", " \t\n mixed \n\t ", "\n\n\n\nparagraphs\n\n\n");
  return out;
}

function digits() {
  const out = [];
  let s = "";
  for (let n = 1; n <= 24; ++n) {
    s += String((n * 7) % 10);
    out.push(s);
  }
  out.push("1,234,567.89", "3.14159265358979323846", "2024-01-15", "12:34:56", "+1 (555) 123-4567",
           "10^100", "1/2 + 3/4", "٠١٢٣٤٥٦٧٨٩", "०१२३४५६७८९", "１２３４５", "一二三四五",
           "abc123def456", "x1y22z333w4444", "99 bottles", "007", "-0.0001", "1e-10", "0000000000");
  return out;
}

// Deterministic pseudo-random mixes of the pools above.
function mixes(pools, count) {
  let state = 12345;
  const rand = (n) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % n;
  };
  const seps = ["", " ", "  ", "\n", "\t", ", ", ". ", "\n\n", " - "];
  const out = [];
  for (let i = 0; i < count; ++i) {
    const parts = 2 + rand(3);
    let s = "";
    for (let k = 0; k < parts; ++k) {
      const pool = pools[rand(pools.length)];
      s += (k ? seps[rand(seps.length)] : "") + pool[rand(pool.length)];
    }
    out.push(s);
  }
  return out;
}

// Invalid UTF-8 byte sequences, with what Node's UTF-8 decoder makes of them
// (WHATWG replacement: one U+FFFD per maximal invalid subpart).
function invalid() {
  const seqs = [
    [0x80], [0xff], [0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xed, 0xa0, 0x80], [0xc0, 0xaf],
    [0x61, 0x80, 0x62], [0x68, 0x69, 0xc3, 0x28], [0xf5, 0x61], [0xe2, 0x28, 0xa1],
    [0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x20, 0xff, 0xfe, 0x20, 0x77], [0xf0, 0x9f, 0x98, 0x80, 0x80],
    [0xc3, 0xa9, 0xc3], [0x20, 0xe4, 0xbd, 0x20], [0xf4, 0x90, 0x80, 0x80], [0xfe, 0xfe, 0xff, 0xff],
    [0x3c, 0x73, 0x3e, 0xc3, 0x3c, 0x2f, 0x73, 0x3e], [0x0a, 0xa0, 0x0a], [0xe0, 0x80, 0x80],
  ];
  return seqs.map((bytes) => Buffer.from(bytes));
}

export function fixtureStrings() {
  const pools = [scripts, code, digits(), whitespace()];
  const texts = [...scripts, ...special, ...code, ...whitespace(), ...digits(),
                 ...mixes([...pools, special], 260)];
  return { texts: [...new Set(texts)], invalid: invalid() };
}
