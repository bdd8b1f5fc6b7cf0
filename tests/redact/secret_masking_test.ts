/**
 * The pure parts of masking and cleaning what a server sends
 * (docs/security-hostile-servers.md): the forms a secret is caught in, secrets split
 * across strings or chunks, errors masked in place, binary content left intact, names
 * shown escaped and look-alikes found.
 *
 * @module
 */

import assert from "node:assert/strict";
import { maskAcross, REDACTED, Redactor } from "../../lib/redact/redact.ts";
import { RedactingStream } from "../../lib/redact/redact_stream.ts";
import { hasHiddenCharacters, showControls } from "../../lib/terminal/terminal.ts";
import { lookalikeNames, lookalikeWarnings, showName } from "../../lib/text/names.ts";

const SECRET = "tok-9f8e7d6c5b4a";
const redactor = () => {
  const r = new Redactor();
  r.addSecret(SECRET);
  return r;
};
const b64 = (text: string) => btoa(text);

Deno.test("a secret is masked inside base64 at every alignment, standard and URL-safe", () => {
  const r = redactor();
  for (const before of ["", "a", "ab", "abc", "Authorization: Bearer "]) {
    for (const after of ["", "x", "xy", "\n"]) {
      const encoded = b64(`${before}${SECRET}${after}`);
      for (const form of [encoded, encoded.replace(/\+/g, "-").replace(/\//g, "_")]) {
        const masked = r.redact(`data ${form} end`);
        assert.match(masked, /\[REDACTED\]/, `${JSON.stringify(before + "|" + after)}: ${form}`);
        for (const [word] of masked.matchAll(/[A-Za-z0-9+/]{8,}/g)) {
          assert.ok(!atob(word.slice(0, word.length - word.length % 4)).includes(SECRET));
        }
      }
    }
  }
});

Deno.test("a secret is masked percent-encoded and JSON-escaped", () => {
  const r = new Redactor();
  r.addSecret('p@ss "word"/x');
  assert.equal(r.redact(`q=${encodeURIComponent('p@ss "word"/x')}`), `q=${REDACTED}`);
  assert.equal(r.redact(JSON.stringify({ a: 'p@ss "word"/x' })), `{"a":"${REDACTED}"}`);
});

Deno.test("a secret split across strings of one field is masked in each piece; other fields are not joined", () => {
  const r = redactor();
  const value = r.redactValue({
    content: [
      { type: "text", text: `first ${SECRET.slice(0, 5)}` },
      { type: "text", text: `${SECRET.slice(5, 9)}` },
      { type: "text", text: `${SECRET.slice(9)} last` },
    ],
    a: SECRET.slice(0, 8),
    b: SECRET.slice(8),
  });
  assert.deepEqual(value.content.map((c) => c.text), [
    `first ${REDACTED}`,
    REDACTED,
    `${REDACTED} last`,
  ]);
  assert.equal(value.a + value.b, SECRET, "different fields are different texts");
  assert.deepEqual(maskAcross(["abc", "def"], ["zzz"]), ["abc", "def"]);
});

Deno.test("text in chunks: a secret split between chunks is masked, the rest passes", () => {
  const stream = new RedactingStream(redactor());
  const chunks = ["hello to", "k-9f8e7", "d6c5b4a world ", "tok-", "9"];
  const out = chunks.map((c) => stream.push(c)).join("") + stream.end();
  assert.equal(out, `hello ${REDACTED} world tok-9`);
});

Deno.test("an error is masked in place, its causes and a protocol error's data too", () => {
  const inner = Object.assign(new Error(`inner ${SECRET}`), { data: { echo: SECRET } });
  const outer = Object.assign(new Error(`outer ${SECRET}`, { cause: inner }), {
    reason: `why ${SECRET}`,
    details: [`detail ${SECRET}`],
  });
  assert.equal(redactor().redactError(outer), outer);
  const text = JSON.stringify([outer.message, outer.stack, outer.reason, outer.details]) +
    JSON.stringify([inner.message, inner.stack, inner.data]);
  assert.ok(!text.includes(SECRET), text);
  assert.match(outer.reason, /why \[REDACTED\]/);
});

Deno.test("binary content is left intact unless it holds a secret", () => {
  const r = redactor();
  // Base64 that happens to hold the shape of a Google key after a '/'.
  const image = `${"Q".repeat(2000)}/AIza${"b".repeat(40)}${"Q".repeat(2000)}`;
  assert.equal(r.redact(image), image);
  const leaking = `${"Q".repeat(2000)}${b64(`x${SECRET}y`)}`;
  const masked = r.redact(leaking);
  assert.equal(masked.length, leaking.length, "the same size");
  assert.ok(!atob(masked).includes(SECRET), "still base64, the secret gone");
  // A resource's blob and an image's data stay decodable, however short.
  const value = r.redactValue({
    contents: [{ uri: "x", blob: b64(`<${SECRET}>`) }],
    content: [{ type: "image", data: b64(SECRET), mimeType: "image/png" }],
  });
  for (const encoded of [value.contents[0].blob, value.content[0].data]) {
    assert.ok(!atob(encoded).includes(SECRET), encoded);
  }
});

Deno.test("control and invisible characters are written visibly, on one line", () => {
  assert.equal(
    showControls("a\u200bb\u202ec\nd\u001b]52;c;QQ==\u0007\te\u0085"),
    "a\\u{200b}b\\u{202e}c\\nd\\x1b]52;c;QQ==\\x07\\te\\x85",
  );
  assert.equal(showControls("tab\tkept", "\t"), "tab\tkept");
  assert.equal(
    showControls("emoji 👍🏽 and joiner 👩\u200d💻, accents é"),
    "emoji 👍🏽 and joiner 👩\u200d💻, accents é",
  );
  assert.equal(hasHiddenCharacters("plain"), false);
  assert.equal(hasHiddenCharacters("x\u2066y"), true);
});

Deno.test("names that differ only by hidden characters are found; different names are not", () => {
  assert.deepEqual(lookalikeNames(["read_file", "read\u200b_file", "write", "wr\u202eite", "x"]), [
    ["read_file", "read\u200b_file"],
    ["write", "wr\u202eite"],
  ]);
  assert.deepEqual(lookalikeNames(["read_file", "read-file", "read_file"]), []);
  assert.equal(showName("ok\nargs: {}"), "ok\\nargs: {}");
  assert.deepEqual(lookalikeWarnings("prompts", ["p", "p\u2060"]), [
    "prompts 'p' and 'p\\u{2060}' differ only by invisible characters: check which one you " +
    "mean before using it",
  ]);
});
