/**
 * How a hook's command line is run. Claude Code hands every hook command to a shell; under
 * Deno's sandbox that would mean granting `sh`, and a shell runs any program whatever
 * `--allow-run` lists. So patchbay runs the program itself when the line is plain words
 * (quoted or not, `$CLAUDE_PROJECT_DIR` and `$PATCHBAY_PROJECT_DIR` included, which it
 * knows), and only a line that needs a shell's features (pipes, redirections, `&&`, other
 * variables, globs, builtins such as `exit`) goes through `sh -c`. Either way the result is
 * what `sh -c` would do: in doubt, the line goes to the shell.
 *
 * A leaf without npm packages: the permission plan (which the launcher computes) reads the
 * same answer to grant the program, or `sh`.
 *
 * @module
 */

/** The shell that runs lines with shell syntax (`sh -c <line>`). */
export const HOOK_SHELL = "sh";

/** Variables a hook line may use without a shell: patchbay substitutes them itself. */
export const PROJECT_DIR_VARIABLES: readonly string[] = [
  "CLAUDE_PROJECT_DIR",
  "PATCHBAY_PROJECT_DIR",
];

/** How one hook's line runs. */
export type HookCommandLine =
  /** The program itself, with these arguments (`argv[0]` as written or substituted). */
  | { kind: "program"; argv: string[] }
  /** `sh -c <line>`; `why` says which shell feature the line uses. */
  | { kind: "shell"; why: string };

/**
 * Words a shell reads itself as its first word: keywords, and builtins, some of which have
 * programs of the same name that differ in small ways (`echo`, `test`), so the shell's own
 * answer is kept.
 */
const SHELL_WORDS: ReadonlySet<string> = new Set([
  ...["!", "{", "}", "case", "do", "done", "elif", "else", "esac", "fi", "for", "if", "in"],
  ...["then", "until", "while", "function", "select", "time"],
  ...[".", ":", "break", "continue", "eval", "exec", "exit", "export", "readonly", "return"],
  ...["set", "shift", "times", "trap", "unset", "source", "local", "alias", "unalias", "bg"],
  ...["fg", "jobs", "cd", "command", "false", "true", "getopts", "hash", "kill", "pwd"],
  ...["read", "type", "ulimit", "umask", "wait", "echo", "printf", "test", "["],
]);

/** Characters that mean something to a shell outside quotes. */
const SHELL_CHARACTERS = new Set([..."|&;<>()`*?[]{}!\n\r"]);

/** Characters that split an unquoted expansion into words, or make it a glob. */
const SPLITS_OR_GLOBS = /[\s*?[\]]/;

/**
 * How `line` runs, with `folder` (where the hook runs) as the value of the project-folder
 * variables.
 */
export function parseHookCommand(line: string, folder: string): HookCommandLine {
  const words: string[] = [];
  let word = "";
  /** Whether a word is being built (`''` is an empty word, not no word). */
  let inWord = false;
  let i = 0;
  const shell = (why: string): HookCommandLine => ({ kind: "shell", why });
  /** The project-folder variable at `line[at]` (a `$`), and where it ends. */
  const variable = (at: number): { end: number } | undefined => {
    for (const name of PROJECT_DIR_VARIABLES) {
      for (const form of [`$${name}`, `\${${name}}`]) {
        if (!line.startsWith(form, at)) continue;
        const end = at + form.length;
        // `$CLAUDE_PROJECT_DIRX` is another variable.
        if (form.endsWith("}") || !/[A-Za-z0-9_]/.test(line[end] ?? "")) return { end };
      }
    }
    return undefined;
  };
  while (i < line.length) {
    const c = line[i];
    if (c === " " || c === "\t") {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      i++;
      continue;
    }
    if (c === "'") {
      const close = line.indexOf("'", i + 1);
      if (close < 0) return shell("an unterminated quote");
      word += line.slice(i + 1, close);
      inWord = true;
      i = close + 1;
      continue;
    }
    if (c === '"') {
      i++;
      for (;;) {
        if (i >= line.length) return shell("an unterminated quote");
        const d = line[i];
        if (d === '"') break;
        if (d === "\\" && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) {
          word += line[i + 1];
          i += 2;
        } else if (d === "\\" && line[i + 1] === "\n") {
          return shell("a line continuation");
        } else if (d === "$") {
          const found = variable(i);
          if (!found) return shell(`a variable or substitution ${describeDollar(line, i)}`);
          word += folder;
          i = found.end;
        } else if (d === "`") {
          return shell("a command substitution `…`");
        } else {
          word += d;
          i++;
        }
      }
      inWord = true;
      i++;
      continue;
    }
    if (c === "\\") {
      if (i + 1 >= line.length || line[i + 1] === "\n") return shell("a trailing backslash");
      word += line[i + 1];
      inWord = true;
      i += 2;
      continue;
    }
    if (c === "$") {
      const found = variable(i);
      if (!found) return shell(`a variable or substitution ${describeDollar(line, i)}`);
      // Unquoted, the shell would split the folder at spaces and expand globs in it.
      if (SPLITS_OR_GLOBS.test(folder)) return shell("an unquoted variable");
      word += folder;
      inWord = true;
      i = found.end;
      continue;
    }
    if (SHELL_CHARACTERS.has(c)) return shell(`shell syntax ${JSON.stringify(c)}`);
    if (!inWord && (c === "#" || c === "~")) {
      return shell(c === "#" ? "a comment" : "a ~ for the home folder");
    }
    if (c === "=" && words.length === 0 && /^[A-Za-z_][A-Za-z0-9_]*$/.test(word)) {
      return shell(`a variable assignment ${word}=…`);
    }
    word += c;
    inWord = true;
    i++;
  }
  if (inWord) words.push(word);
  if (words.length === 0) return shell("no program named");
  if (!words[0].includes("/") && SHELL_WORDS.has(words[0])) {
    return shell(`the shell's own word '${words[0]}'`);
  }
  return { kind: "program", argv: words };
}

/** `$HOME`, `${HOME}`, `$(…)`: the reference at `line[at]`, shortened, for messages. */
function describeDollar(line: string, at: number): string {
  const match = /^\$(?:\{[^}]*\}?|\(|[A-Za-z_][A-Za-z0-9_]*|.?)/.exec(line.slice(at));
  const text = match?.[0] ?? "$";
  return text === "$(" ? "$(…)" : text.slice(0, 40);
}
