// Renders TeX to HTML for the build: one JSON request per input line
// ({"tex": "...", "display": true}), one JSON answer per output line ({"html": "..."} or
// {"error": "..."}). The MkDocs hook keeps one process for the whole build, so KaTeX is
// loaded once and pages ship no math JavaScript.
"use strict";
const katex = require("katex");
const readline = require("readline");

const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on("line", (line) => {
  let answer;
  try {
    const request = JSON.parse(line);
    answer = {
      html: katex.renderToString(request.tex, {
        displayMode: Boolean(request.display),
        throwOnError: true,
        strict: "error",
        output: "htmlAndMathml",
      }),
    };
  } catch (error) {
    answer = { error: String(error.message || error) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
});
