/**
 * `patchbay completions bash|zsh|fish`: a shell completion script for the commands, their
 * flags and the server names, generated from the command tree (so every command the
 * program has is in it, whoever added it). Server names are not written into the script:
 * it asks `patchbay completions --servers` (the names of the configuration in effect,
 * `--config` included, read from the file without validating it or starting anything) at
 * the moment Tab is pressed, so a server added later completes too. See
 * docs/tools-and-sessions.md.
 *
 * @module
 */

import type { Command } from "commander";
import { fileURLToPath } from "node:url";
import { locateConfig } from "../lib/config/locate.ts";
import { EXIT, UsageError } from "../lib/errors.ts";
import { MAX_CONFIG_BYTES, readBoundedTextSync } from "../lib/files/bounded_read.ts";
import { USAGE_STEPS } from "../lib/errors/usage_steps.ts";

/** The shells a script is made for. */
export const SHELLS = ["bash", "zsh", "fish"] as const;

/** Options of `patchbay completions`. */
export interface CompletionsOptions {
  /** Print the configured server names instead, one a line. @default false */
  servers?: boolean;
  /** The root `--config`. */
  config?: string;
}

/** One command of the tree, as completion needs it. */
export interface CommandSpec {
  /** Words from the root: `[]` for the root, `["auth", "login"]`. */
  path: string[];
  summary: string;
  subcommands: string[];
  options: OptionSpec[];
  /** Its first argument is a server name (an argument named `server`). */
  serverArgument: boolean;
  /** The values its first argument takes, when it names them (`.choices()`). */
  choices: string[];
}

/** One flag. */
export interface OptionSpec {
  long?: string;
  short?: string;
  summary: string;
  /** Takes a value: the next word is not a command. */
  takesValue: boolean;
  /** The value is a server name (`--server`, `--rediscover <server>`). */
  server: boolean;
  /** The value is a file path (`--config`, `--env-file`, `--log-file`). */
  file: boolean;
}

/** Prints the script for `shell`, or the server names with `--servers`. */
export function completions(
  shell: string | undefined,
  program: Command,
  options: CompletionsOptions,
): Promise<number> {
  if (options.servers) {
    for (const name of serverNames(options.config)) console.log(name);
    return Promise.resolve(EXIT.ok);
  }
  if (!shell || !(SHELLS as readonly string[]).includes(shell)) {
    throw new UsageError(
      shell
        ? `unknown shell '${shell}': completions are made for ${SHELLS.join(", ")}`
        : `which shell? completions are made for ${SHELLS.join(", ")}`,
      USAGE_STEPS.completionsShell,
    );
  }
  const specs = commandSpecs(program);
  const script = shell === "fish" ? fishScript(specs) : bashScript(specs, shell === "zsh");
  console.log(script);
  return Promise.resolve(EXIT.ok);
}

/** Every command of the tree, depth first, the root first. */
export function commandSpecs(root: Command): CommandSpec[] {
  const specs: CommandSpec[] = [];
  const visit = (command: Command, path: string[]) => {
    const visible = command.commands.filter((c) =>
      !(c as unknown as { _hidden?: boolean })._hidden
    );
    specs.push({
      path,
      summary: command.description(),
      subcommands: visible.flatMap((c) => [c.name(), ...c.aliases()]),
      options: [
        ...command.options.filter((o) => !o.hidden).map((o) => ({
          long: o.long,
          short: o.short,
          summary: o.description,
          takesValue: o.required || o.optional,
          server: /\bserver\b/.test(o.flags),
          file: /<path>/.test(o.flags),
        })),
        {
          long: "--help",
          short: "-h",
          summary: "show help",
          takesValue: false,
          server: false,
          file: false,
        },
      ],
      serverArgument: command.registeredArguments[0]?.name() === "server",
      choices: [...command.registeredArguments[0]?.argChoices ?? []],
    });
    for (const sub of visible) visit(sub, [...path, sub.name()]);
  };
  visit(root, []);
  return specs;
}

/** The server names of the configuration in effect; none when it cannot be read. */
function serverNames(explicit: string | undefined): string[] {
  const project = fileURLToPath(new URL("..", import.meta.url));
  try {
    const { path } = locateConfig(explicit, project);
    // Tab runs this: a configuration that is a pipe or a device must not hang the shell.
    const text = readBoundedTextSync(path, {
      what: "the configuration file",
      maxBytes: MAX_CONFIG_BYTES,
    });
    const servers = JSON.parse(text)?.mcpServers;
    if (!servers || typeof servers !== "object") return [];
    // Names that a shell would split or misread are left out rather than offered broken.
    return Object.keys(servers).filter((name) => /^[\w.@:+-]+$/.test(name));
  } catch {
    return [];
  }
}

const words = (list: readonly string[]) => list.join(" ");

/** bash (and zsh through bashcompinit): one function walking the words typed so far. */
function bashScript(specs: readonly CommandSpec[], zsh: boolean): string {
  const valued = specs.flatMap((s) => s.options.filter((o) => o.takesValue))
    .flatMap((o) => [o.long, o.short]).filter((f): f is string => Boolean(f));
  const serverFlags = specs.flatMap((s) => s.options.filter((o) => o.server))
    .flatMap((o) => [o.long, o.short]).filter((f): f is string => Boolean(f));
  const fileFlags = specs.flatMap((s) => s.options.filter((o) => o.file))
    .flatMap((o) => [o.long, o.short]).filter((f): f is string => Boolean(f));
  const cases = specs.map((s) => {
    const flags = s.options.flatMap((o) => [o.long, o.short]).filter(Boolean) as string[];
    return `    "${s.path.join(" ")}") subs="${words(s.subcommands)}"; ` +
      `values="${words(s.choices)}"; flags="${words(flags)}"; ` +
      `server_arg=${s.serverArgument ? 1 : 0} ;;`;
  }).join("\n");
  // An empty list would be a broken pattern: one that matches no word stands in.
  const unique = (list: string[]) => [...new Set(list)].join("|") || "--patchbay-none";
  return `${zsh ? "#compdef patchbay\nautoload -U +X bashcompinit && bashcompinit\n" : ""}` +
    `# patchbay shell completion (${zsh ? "zsh" : "bash"}), made by \`patchbay completions\`.
# Server names come from \`patchbay completions --servers\` when Tab is pressed.
_patchbay_servers() {
  # stdin is the terminal the line is being edited on: zsh waited on it for good.
  patchbay "$@" completions --servers 2>/dev/null </dev/null
}
_patchbay() {
  # The command words so far are "node", never "path": zsh ties $path to $PATH.
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" node="" positional=0 i word
  local subs values flags server_arg config=()
  (( COMP_CWORD > 0 )) && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  _patchbay_node() {
    case "$1" in
${cases}
    *) subs=""; values=""; flags=""; server_arg=0 ;;
    esac
  }
  _patchbay_node ""
  for (( i = 1; i < COMP_CWORD; i++ )); do
    word="\${COMP_WORDS[i]}"
    case "$word" in
      -c|--config) config=(--config "\${COMP_WORDS[i+1]}"); (( i++ )); continue ;;
      ${unique(valued)}) (( i++ )); continue ;;
      -*) continue ;;
    esac
    if [[ " $subs " == *" $word "* ]]; then
      node="\${node:+$node }$word"
      _patchbay_node "$node"
      positional=0
    else
      (( positional++ ))
    fi
  done
  case "$prev" in
    ${
      unique(serverFlags)
    }) COMPREPLY=($(compgen -W "$(_patchbay_servers "\${config[@]}")" -- "$cur")); return ;;
    ${unique(fileFlags)})
      # One name a line: a file name with spaces stays one word (quoted by bash).
      compopt -o filenames 2>/dev/null
      local IFS=$'\\n'
      COMPREPLY=($(compgen -f -- "$cur"))
      return ;;
    ${unique(valued)}) COMPREPLY=(); return ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    return
  fi
  local choices="$subs"
  (( positional == 0 )) && choices="$choices $values"
  if (( server_arg == 1 && positional == 0 )); then
    choices="$choices $(_patchbay_servers "\${config[@]}")"
  fi
  COMPREPLY=($(compgen -W "$choices" -- "$cur"))
}
complete -F _patchbay patchbay${
      zsh
        ? `
# Loaded by compinit from $fpath at the first Tab: complete that Tab too (otherwise the
# first one only defines the functions above and offers nothing).
if [[ "\${funcstack[1]-}" == _patchbay ]] && (( \${+functions[_bash_complete]} )); then
  _bash_complete -F _patchbay
fi`
        : ""
    }`;
}

/** fish: one `complete` line per command, flag and server argument. */
function fishScript(specs: readonly CommandSpec[]): string {
  const quote = (text: string) => `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
  const valued = specs.flatMap((s) => s.options.filter((o) => o.takesValue))
    .flatMap((o) => [o.long, o.short]).filter((f): f is string => Boolean(f));
  const lines = [
    "# patchbay shell completion (fish), made by `patchbay completions`.",
    "# Server names come from `patchbay completions --servers` when Tab is pressed.",
    "function __patchbay_servers",
    "    patchbay completions --servers 2>/dev/null </dev/null",
    "end",
    "function __patchbay_at",
    "    # The command words typed so far (flags and their values left out) equal $argv.",
    "    set -l tokens (commandline -opc)",
    "    set -l path",
    "    set -l skip 0",
    "    for token in $tokens[2..-1]",
    "        if test $skip = 1",
    "            set skip 0",
    "            continue",
    "        end",
    `        if contains -- $token ${[...new Set(valued)].join(" ")}`,
    "            set skip 1",
    "            continue",
    "        end",
    "        string match -q -- '-*' $token; and continue",
    "        set -a path $token",
    "    end",
    '    test "$path" = "$argv"',
    "end",
    "complete -c patchbay -f",
  ];
  for (const spec of specs) {
    const at = `-n ${quote(`__patchbay_at ${spec.path.join(" ")}`.trim())}`;
    for (const sub of spec.subcommands) {
      const child = specs.find((s) => s.path.join(" ") === [...spec.path, sub].join(" "));
      lines.push(`complete -c patchbay ${at} -a ${quote(sub)} -d ${quote(child?.summary ?? "")}`);
    }
    for (const option of spec.options) {
      const flags = [
        option.long ? `-l ${option.long.replace(/^--/, "")}` : "",
        option.short ? `-s ${option.short.replace(/^-/, "")}` : "",
      ].filter(Boolean).join(" ");
      const value = option.server
        ? " -x -a '(__patchbay_servers)'"
        : option.file
        ? " -r -F"
        : option.takesValue
        ? " -x"
        : "";
      lines.push(`complete -c patchbay ${at} ${flags}${value} -d ${quote(option.summary)}`);
    }
    for (const value of spec.choices) {
      lines.push(`complete -c patchbay ${at} -a ${quote(value)}`);
    }
    if (spec.serverArgument) {
      lines.push(`complete -c patchbay ${at} -a '(__patchbay_servers)' -d 'server'`);
    }
  }
  return lines.join("\n");
}
