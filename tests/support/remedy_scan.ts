/**
 * Finds remedies written outside the failure table (`lib/errors/failure_table.ts`) in
 * TypeScript source, with a small tokenizer (strings, templates, comments and regular
 * expressions are read as wholes, so a quote or a brace inside one misleads nothing).
 *
 * A remedy is written out when its words are a literal:
 *
 * - a `remedy` property, variable, default or assignment whose value is, or starts with, a
 *   string or template literal (`remedy: "…"`, `remedy = "…"`), a per-surface object of
 *   literals (`remedy: { repl: "…", script: "…" }`), `remedyOf("…")`, or a `perSurface`
 *   template with words of its own;
 * - a constant named `…_REMEDY` (or `…Remedy`) bound to such a value;
 * - a literal passed where a function or constructor declared in the scanned source takes a
 *   parameter named `remedy` (`new SamplingRejectedError(server, reason, "…")`,
 *   `fail(reason, "…")`).
 *
 * @module
 */

/** One token: a literal (string or template), a name, or a punctuator. */
interface Token {
  readonly kind: "string" | "template" | "name" | "punct";
  readonly text: string;
  /** Offset in the source. */
  readonly at: number;
  /** For a template: whether it has words of its own outside `${…}`. */
  readonly words?: boolean;
}

/** A remedy written outside the table. */
export interface Finding {
  readonly file: string;
  readonly line: number;
  /** The literal's first words, to name it in an allow-list (stable across line moves). */
  readonly text: string;
}

const NAME = /[A-Za-z_$][\w$]*/y;
const NUMBER = /\d[\w.]*/y;
/** After these a `/` divides; elsewhere it starts a regular expression. */
const DIVIDES_AFTER = /^(?:[\w$)\]}]|\+\+|--)$/;

/** The tokens of `source`, comments dropped. */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const readTemplate = (): Token => {
    const at = i;
    i++; // `
    let words = false;
    while (i < source.length && source[i] !== "`") {
      if (source[i] === "\\") i += 2;
      else if (source[i] === "$" && source[i + 1] === "{") {
        i += 2;
        let depth = 1;
        while (i < source.length && depth > 0) {
          const c = source[i];
          if (c === "{") depth++, i++;
          else if (c === "}") depth--, i++;
          // Words in a literal inside `${…}` are the template's words too.
          else if (c === "`") words = readTemplate().words || words;
          else if (c === '"' || c === "'") words = readString(c).text.length > 2 || words;
          else i++;
        }
      } else {
        if (source[i].trim()) words = true;
        i++;
      }
    }
    i++;
    return { kind: "template", text: source.slice(at, i), at, words };
  };
  const readString = (quote: string): Token => {
    const at = i;
    i++;
    while (i < source.length && source[i] !== quote && source[i] !== "\n") {
      i += source[i] === "\\" ? 2 : 1;
    }
    i++;
    return { kind: "string", text: source.slice(at, i), at };
  };
  while (i < source.length) {
    const c = source[i];
    if (/\s/.test(c)) i++;
    else if (source.startsWith("//", i)) {
      i = source.indexOf("\n", i) < 0 ? source.length : source.indexOf("\n", i);
    } else if (source.startsWith("/*", i)) i = source.indexOf("*/", i + 2) + 2;
    else if (c === '"' || c === "'") tokens.push(readString(c));
    else if (c === "`") tokens.push(readTemplate());
    else if (c === "/" && !DIVIDES_AFTER.test(tokens.at(-1)?.text.slice(-1) ?? "")) {
      // A regular expression: to its closing `/` (outside a class), then its flags.
      const at = i;
      let inClass = false;
      i++;
      while (i < source.length && (inClass || source[i] !== "/") && source[i] !== "\n") {
        if (source[i] === "\\") i++;
        else if (source[i] === "[") inClass = true;
        else if (source[i] === "]") inClass = false;
        i++;
      }
      i++;
      NAME.lastIndex = i;
      if (NAME.exec(source)) i = NAME.lastIndex;
      tokens.push({ kind: "string", text: "/regexp/", at });
    } else {
      NAME.lastIndex = i;
      NUMBER.lastIndex = i;
      const name = NAME.exec(source) ?? NUMBER.exec(source);
      if (name) {
        tokens.push({ kind: "name", text: name[0], at: i });
        i += name[0].length;
      } else {
        const punct = ["...", "=>", "?.", "??", "++", "--"].find((p) => source.startsWith(p, i)) ??
          c;
        tokens.push({ kind: "punct", text: punct, at: i });
        i += punct.length;
      }
    }
  }
  return tokens;
}

const OPEN: Record<string, string> = { "(": ")", "[": "]", "{": "}" };

/** The index of the token closing the bracket at `open`. */
function closing(tokens: readonly Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    if (tokens[i].kind !== "punct") continue;
    if (tokens[i].text in OPEN) depth++;
    else if (Object.values(OPEN).includes(tokens[i].text) && --depth === 0) return i;
  }
  return tokens.length;
}

/** The first token of each top-level item between the brackets at `open` and its close. */
function items(tokens: readonly Token[], open: number): number[] {
  const end = closing(tokens, open);
  const starts = end > open + 1 ? [open + 1] : [];
  for (let i = open + 1; i < end; i++) {
    if (tokens[i].kind === "punct" && tokens[i].text in OPEN) i = closing(tokens, i);
    else if (tokens[i].text === "," && tokens[i].kind === "punct" && i + 1 < end) {
      starts.push(i + 1);
    }
  }
  return starts;
}

const isLiteral = (t: Token | undefined) =>
  t !== undefined && (t.kind === "string" && t.text !== "/regexp/" ||
    t.kind === "template" && t.words === true);

/** Whether the value starting at token `i` is a remedy written as literal words. */
function literalAt(tokens: readonly Token[], i: number): Token | undefined {
  const t = tokens[i];
  if (isLiteral(t)) return t;
  if (t?.text === "remedyOf" && tokens[i + 1]?.text === "(") return literalAt(tokens, i + 2);
  if (t?.text === "perSurface" && isLiteral(tokens[i + 1])) return tokens[i + 1];
  if (t?.text === "{" && t.kind === "punct") {
    for (const start of items(tokens, i)) {
      const key = tokens[start]?.text;
      if ((key === "repl" || key === "script") && tokens[start + 1]?.text === ":") {
        const literal = literalAt(tokens, start + 2);
        if (literal) return literal;
      }
    }
  }
  return undefined;
}

const REMEDY_NAME = /^(?:remedy|\w*_REMEDY|REMEDY_\w+|\w*[a-z]Remedy)$/;

/**
 * Functions and constructors of `tokens` that take a parameter named `remedy`: the name
 * (a function, arrow, or the class of a constructor) and the parameter's position;
 * `exportedOnly`: only those other files can call (constructors and exported functions).
 */
export function remedyParameters(
  tokens: readonly Token[],
  exportedOnly = false,
): Map<string, number> {
  const found = new Map<string, number>();
  let currentClass = "";
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.text === "class" && tokens[i + 1]?.kind === "name") currentClass = tokens[i + 1].text;
    let name: string | undefined;
    let open = -1;
    if (t.text === "constructor" && tokens[i + 1]?.text === "(") {
      [name, open] = [currentClass, i + 1];
    } else if (t.text === "function" && tokens[i + 1]?.kind === "name") {
      [name, open] = [tokens[i + 1].text, i + 2];
      if (tokens[open]?.text === "<") open = closingAngle(tokens, open) + 1;
    } else if (
      (t.text === "const" || t.text === "let") && tokens[i + 1]?.kind === "name" &&
      tokens[i + 2]?.text === "=" && tokens[i + 3]?.text === "("
    ) {
      const end = closing(tokens, i + 3);
      const after = tokens[end + 1]?.text === ":" ? arrowAfterType(tokens, end + 2) : end + 1;
      if (tokens[after]?.text === "=>") [name, open] = [tokens[i + 1].text, i + 3];
    }
    if (name === undefined || tokens[open]?.text !== "(") continue;
    // A class's constructor is reached from anywhere; a local helper only in its file.
    if (exportedOnly && t.text !== "constructor" && tokens[i - 1]?.text !== "export") continue;
    items(tokens, open).forEach((start, index) => {
      if (tokens[start].text === "remedy") found.set(name, index);
    });
  }
  return found;
}

function closingAngle(tokens: readonly Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    if (tokens[i].text === "<") depth++;
    else if (tokens[i].text === ">" && --depth === 0) return i;
  }
  return open;
}

/** The `=>` after an arrow's return type starting at `i`, or -1. */
function arrowAfterType(tokens: readonly Token[], i: number): number {
  for (let j = i; j < tokens.length && j < i + 40; j++) {
    if (tokens[j].text === "=>") return j;
    if (tokens[j].text === ";") return -1;
  }
  return -1;
}

/**
 * The remedies written as literals in `source` (of `file`); `parameters` names the
 * functions and constructors taking a `remedy` parameter, at which position.
 */
export function findRemedies(
  file: string,
  source: string,
  parameters: ReadonlyMap<string, number>,
): Finding[] {
  const tokens = tokenize(source);
  const local = new Map([...parameters, ...remedyParameters(tokens)]);
  const literals = new Map<number, Token>();
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    const next = tokens[i + 1]?.text;
    if (t.kind === "name" && REMEDY_NAME.test(t.text) && (next === ":" || next === "=")) {
      // `remedy: …` may be a type annotation (`remedy: string`): only literals count.
      const literal = literalAt(tokens, i + 2);
      if (literal) literals.set(literal.at, literal);
    }
    if (t.kind === "name" && local.has(t.text) && tokens[i + 1]?.text === "(") {
      const declared = tokens[i - 1]?.text === "function" || tokens[i - 1]?.text === "class";
      const start = items(tokens, i + 1)[local.get(t.text)!];
      const literal = declared || start === undefined ? undefined : literalAt(tokens, start);
      if (literal) literals.set(literal.at, literal);
    }
  }
  return [...literals.values()].map((literal) => ({
    file,
    line: source.slice(0, literal.at).split("\n").length,
    text: literal.text.slice(1, -1).slice(0, 40),
  }));
}
