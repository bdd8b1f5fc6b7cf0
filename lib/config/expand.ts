/**
 * `${VAR}` and `${VAR:-default}` expansion in configuration strings.
 *
 * A variable that is unset (or empty) with no default is an error, not an empty string:
 * an empty bearer token or path fails later in a place that no longer names the variable.
 * `$${` writes a literal `${`. A default may itself hold references, as in the shell:
 * `${A:-${B:-fallback}}` is A, else B, else `fallback`; a variable inside a default is
 * needed (and reported when unset) only when that default is used. Inside a default, `\`
 * escapes the next character (`\}` is a literal brace). `${env:VAR}` (Cursor's and VS
 * Code's form) is `${VAR}`; `${input:id}` and other clients' `${kind:...}` are malformed.
 * `${keychain:NAME}` is the OS keychain's entry NAME (docs/secrets.md): its value comes
 * from the caller's keychain lookup, and stays written as it is without one (the keychain
 * is read only by the commands that use the values).
 *
 * @module
 */

/** One `${VAR}` that had no value. */
export interface MissingVariable {
  name: string;
}

/** Result of expanding one string. */
export interface Expansion {
  value: string;
  missing: MissingVariable[];
  /** A `${` that is not a well-formed reference, e.g. `${1X}` or an unclosed brace. */
  malformed: boolean;
  /** What is malformed, when `malformed` is true. */
  detail?: string;
  /**
   * A reference of another client's kind (VS Code's `${input:id}`), as written: that client
   * asks its user for the value, which patchbay cannot.
   */
  foreign?: string;
  /** The `${keychain:NAME}` entries the value uses, by NAME. */
  keychain: string[];
}

/** Deepest nesting of references in defaults; deeper is a mistake, not a configuration. */
export const MAX_REFERENCE_NESTING = 8;

const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
/** The prefix Cursor and VS Code put before an environment variable's name. */
const ENV_PREFIX = "env:";
/** The prefix of a keychain entry's name: `${keychain:NAME}`. */
const KEYCHAIN_PREFIX = "keychain:";
/**
 * What a keychain entry's name may be: safe as an argument on every platform's tool. Not
 * starting with `-`: the keychain tool would read it as an option (`${keychain:--help}`
 * made secret-tool print its usage, with status 0, and that was taken as the secret).
 */
export const KEYCHAIN_ENTRY = /^[A-Za-z0-9_.@][A-Za-z0-9_.@-]{0,127}$/;
const KEYCHAIN_NAME = /[A-Za-z0-9_.@-]+/y;

type Lookup = (name: string) => string | undefined;

/** Walks one string; `lookup` undefined collects names only. */
class Expander {
  readonly missing: MissingVariable[] = [];
  readonly names: string[] = [];
  /** Keychain entries the used text refers to. */
  readonly keychain: string[] = [];
  detail: string | undefined;
  /** The first reference of another client's kind (`${input:token}`), as written. */
  foreign: string | undefined;
  #at = 0;

  constructor(
    private readonly input: string,
    private readonly lookup?: Lookup,
    private readonly keychainLookup?: Lookup,
  ) {}

  run(): string {
    return this.#text(0, true);
  }

  /**
   * Text up to the end of input, or (at `depth` > 0, inside a default) up to its closing
   * `}`, which is consumed. `active`: the text is used, so its unset variables count.
   */
  #text(depth: number, active: boolean): string {
    const input = this.input;
    let out = "";
    while (this.#at < input.length) {
      if (input.startsWith("$${", this.#at)) {
        out += "${";
        this.#at += 3;
      } else if (input.startsWith("${", this.#at)) {
        out += this.#reference(depth, active);
      } else if (depth > 0 && input[this.#at] === "\\" && this.#at + 1 < input.length) {
        out += input[this.#at + 1];
        this.#at += 2;
      } else if (depth > 0 && input[this.#at] === "}") {
        this.#at++;
        return out;
      } else {
        out += input[this.#at++];
      }
    }
    if (depth > 0) this.#malformed("a default is never closed with '}'");
    return out;
  }

  /** One `${...}` starting at the cursor; malformed ones stay as written. */
  #reference(depth: number, active: boolean): string {
    const start = this.#at;
    if (this.input.startsWith(KEYCHAIN_PREFIX, start + 2)) return this.#keychain(active);
    // `${env:NAME}` is how Cursor and VS Code write `${NAME}`.
    const prefix = this.input.startsWith(ENV_PREFIX, start + 2) ? ENV_PREFIX.length : 0;
    NAME.lastIndex = start + 2 + prefix;
    const name = NAME.exec(this.input)?.[0];
    const after = start + 2 + (name?.length ?? 0);
    if (
      name !== undefined && prefix === 0 && this.input.startsWith(":", after) &&
      !this.input.startsWith(":-", after)
    ) {
      // `${input:id}`, `${config:...}`: another client's variables, which nothing here has.
      const end = this.input.indexOf("}", start);
      const form = this.input.slice(start, end === -1 ? undefined : end + 1);
      this.foreign ??= form;
      this.#malformed(`${form} is a variable of another client, not of the environment`);
      this.#at = end === -1 ? this.input.length : end + 1;
      return form;
    }
    if (name === undefined) {
      this.#malformed("'${' must be followed by a variable name (letters, digits, _)");
      this.#at = start + 2;
      return "${";
    }
    this.names.push(name);
    this.#at = start + 2 + prefix + name.length;
    const found = this.lookup?.(name);
    const set = found !== undefined && found !== "";
    if (this.input[this.#at] === "}") {
      this.#at++;
      if (set) return found;
      if (active && this.lookup) this.missing.push({ name });
      return "";
    }
    if (this.input.startsWith(":-", this.#at)) {
      if (depth + 1 > MAX_REFERENCE_NESTING) {
        this.#malformed(`references nest more than ${MAX_REFERENCE_NESTING} deep`);
        this.#at = this.input.length;
        return this.input.slice(start);
      }
      this.#at += 2;
      const fallback = this.#text(depth + 1, active && !set);
      return set ? found : fallback;
    }
    this.#malformed(`"\${${name}" must be followed by '}' or ':-default}'`);
    return this.input.slice(start, this.#at);
  }

  /** One `${keychain:NAME}` at the cursor: its value, or as written when none is given. */
  #keychain(active: boolean): string {
    const start = this.#at;
    const from = start + 2 + KEYCHAIN_PREFIX.length;
    KEYCHAIN_NAME.lastIndex = from;
    const name = KEYCHAIN_NAME.exec(this.input)?.[0];
    const end = from + (name?.length ?? 0);
    if (name === undefined || this.input[end] !== "}" || !KEYCHAIN_ENTRY.test(name)) {
      this.#malformed(
        "write ${keychain:NAME}, NAME being up to 128 letters, digits, _ . @ or -, not " +
          "starting with - (a keychain entry has no default)",
      );
      const close = this.input.indexOf("}", start);
      this.#at = close === -1 ? this.input.length : close + 1;
      return this.input.slice(start, this.#at);
    }
    this.#at = end + 1;
    if (active) this.keychain.push(name);
    return this.keychainLookup?.(name) ?? this.input.slice(start, this.#at);
  }

  #malformed(detail: string): void {
    this.detail ??= detail;
  }
}

/**
 * Expands every reference in `input` using `lookup`, and `keychain` for `${keychain:NAME}`
 * (without it, or when it has no value, the reference stays as written).
 */
export function expandVariables(input: string, lookup: Lookup, keychain?: Lookup): Expansion {
  const expander = new Expander(input, lookup, keychain);
  const value = expander.run();
  const common = { value, missing: expander.missing, keychain: expander.keychain };
  if (expander.detail === undefined) return { ...common, malformed: false };
  const { detail, foreign } = expander;
  return { ...common, malformed: true, detail, foreign };
}

/** The keychain entries `input` refers to (`${keychain:NAME}`), in order, once each. */
export function referencedKeychainEntries(input: string): string[] {
  const expander = new Expander(input);
  expander.run();
  return [...new Set(expander.keychain)];
}

/** Names of the variables `input` refers to (`$${` escapes excluded), in order, once each. */
export function referencedVariables(input: string): string[] {
  const expander = new Expander(input);
  expander.run();
  return [...new Set(expander.names)];
}

/**
 * The environment variable to write in place of another client's variable: `github-token`
 * (of `${input:github-token}`) is `GITHUB_TOKEN`. Its value then goes in `.env`.
 */
export function variableInPlaceOf(reference: string): string {
  const id = reference.replace(/^\$\{/, "").replace(/\}$/, "").replace(/^[A-Za-z]+:/, "");
  const name = id.replace(/[^A-Za-z0-9]+/g, "_").replace(/^_+|_+$/g, "").toUpperCase();
  if (name === "") return "API_TOKEN";
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

/**
 * What to do instead of another client's `reference` (VS Code's `${input:id}`, whose value
 * VS Code asks its user for): the value in `.env`, the variable in its place.
 */
export function insteadOfForeign(reference: string): string {
  const name = variableInPlaceOf(reference);
  return `set ${name} to the value in .env and write \${${name}} in place of ${reference}`;
}
