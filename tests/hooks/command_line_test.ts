/**
 * How a hook's command line runs (lib/hooks/command_line.ts): plain words run the program
 * itself, with the result `sh -c` would give; anything a shell does itself goes to `sh`.
 */

import assert from "node:assert/strict";
import { parseHookCommand } from "../../lib/hooks/command_line.ts";

const FOLDER = "/srv/project";

Deno.test("plain words, quotes and escapes run the program itself, as sh would split them", () => {
  assert.deepEqual(parseHookCommand("./guard.sh --strict", FOLDER), {
    kind: "program",
    argv: ["./guard.sh", "--strict"],
  });
  assert.deepEqual(parseHookCommand(`python3 'a b' "c \\"d\\"" e\\ f ''`, FOLDER), {
    kind: "program",
    argv: ["python3", "a b", 'c "d"', "e f", ""],
  });
  // Characters that are literal inside quotes or in the middle of a word.
  assert.deepEqual(parseHookCommand(`jq '.tool_input | keys' a#b x=1 "*"`, FOLDER), {
    kind: "program",
    argv: ["jq", ".tool_input | keys", "a#b", "x=1", "*"],
  });
});

Deno.test("Claude Code's project folder variable is substituted, quoted or not", () => {
  assert.deepEqual(parseHookCommand('"$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh', FOLDER), {
    kind: "program",
    argv: ["/srv/project/.claude/hooks/x.sh"],
  });
  assert.deepEqual(parseHookCommand("${PATCHBAY_PROJECT_DIR}/x.sh $CLAUDE_PROJECT_DIR", FOLDER), {
    kind: "program",
    argv: ["/srv/project/x.sh", "/srv/project"],
  });
  // Unquoted, a folder with a space would be split by the shell: the shell runs it.
  assert.equal(parseHookCommand("$CLAUDE_PROJECT_DIR/x.sh", "/my project").kind, "shell");
  assert.equal(parseHookCommand('"$CLAUDE_PROJECT_DIR/x.sh"', "/my project").kind, "program");
  // A longer name is another variable.
  assert.equal(parseHookCommand("$CLAUDE_PROJECT_DIRX/x.sh", FOLDER).kind, "shell");
});

Deno.test("shell syntax, other variables and the shell's own words go to sh, saying which", () => {
  const cases: [string, RegExp][] = [
    ["cat > /tmp/log", /shell syntax ">"/],
    ["a | b", /shell syntax "\|"/],
    ["a && b", /shell syntax "&"/],
    ["a; b", /shell syntax ";"/],
    ["echo $HOME", /variable or substitution \$HOME/],
    ['echo "$(date)"', /variable or substitution \$\(…\)/],
    ["echo `date`", /shell syntax "`"/],
    [`"a \`date\`"`, /command substitution/],
    ["ls *.json", /shell syntax "\*"/],
    ["~/bin/hook", /home folder/],
    ["FOO=1 ./hook", /variable assignment FOO=…/],
    ["exit 2", /shell's own word 'exit'/],
    ["echo hi", /shell's own word 'echo'/],
    ["# only a comment", /a comment/],
    ["'unterminated", /unterminated quote/],
    ["a\nb", /shell syntax "\\n"/],
    ["   ", /no program named/],
  ];
  for (const [line, why] of cases) {
    const parsed = parseHookCommand(line, FOLDER);
    assert.equal(parsed.kind, "shell", line);
    assert.match((parsed as { why: string }).why, why, line);
  }
  // A path to a program called like a builtin is that program.
  assert.equal(parseHookCommand("./exit", FOLDER).kind, "program");
});
