#!/usr/bin/env python3
"""Renders the Python language cases (features @huggingface/jinja lacks) with
Python Jinja 2 (Debian python3-jinja2), trim_blocks and lstrip_blocks on as
Hugging Face sets them, into tests/fixtures/templates/language_python.json.
Run after make_goldens.mjs, which writes language_python_cases.json."""
import json
import pathlib

import jinja2

root = pathlib.Path(__file__).resolve().parents[2]
fixtures = root / "tests/fixtures/templates"
env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
cases = json.loads((fixtures / "language_python_cases.json").read_text())
for case in cases:
    try:
        case["output"] = env.from_string(case["template"]).render(**case["context"])
    except Exception as error:  # recorded: cairn must fail too
        case["error"] = str(error)
(fixtures / "language_python.json").write_text(json.dumps(cases, indent=1, ensure_ascii=False) + "\n")
(fixtures / "language_python_cases.json").unlink()
print(f"rendered {len(cases)} python cases")
