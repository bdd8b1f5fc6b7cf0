/**
 * The remedies of a failed server connection, as the diagnosis finds its cause
 * (`lib/connections/diagnosis/`), and of a server's requests and reports
 * (`lib/connections/`, `lib/errors/server.ts`): part of the failure table
 * (`lib/errors/failure_table.ts`), kept in a file of their own so the table stays within the
 * size of a file. Each step is one text for both surfaces, worded per surface where it names
 * a slash command, or a function of the values only known when it fails (the command line,
 * the transport the URL speaks).
 *
 * @module
 */

import { perSurface, type Remedy, ROWS } from "./failure_table.ts";

/** What patchbay does about a lost server, for remedies. */
const RESTARTING = {
  repl: "patchbay keeps trying to reconnect (/connections shows the next attempt; /refresh " +
    "tries at once)",
  script: "patchbay keeps trying to reconnect",
};

/** Steps of the remedies of a server that failed to connect. */
export const CONNECTION_STEPS = {
  /** A server that redirects to another origin (its headers would go with the request). */
  crossOriginRedirect: 'if that host is the server, make it the entry\'s "url"; otherwise the ' +
    "server (or an open redirect on it) is sending you elsewhere",
  /** A stdio server that exited during the handshake. */
  exited: (commandLine: string): string =>
    `run the command by hand to see why: ${commandLine}; fix what its error output says ` +
    '(variables it needs go in the entry\'s "env")',
  /** A stdio server that closed its stdout without answering. */
  stdoutClosed: (commandLine: string): string =>
    `run the command by hand to see why: ${commandLine}`,
  /** A process that prints text that is not MCP JSON-RPC on stdout. */
  stdoutNoise: perSurface`${ROWS.wrong_transport.remedy}${
    "; if the program does speak stdio, give it the option that " +
    "keeps its stdout for protocol messages only"
  }`,
  /** A process that serves MCP over HTTP (`mcp`) at `url` instead of stdio. */
  servesHttp: (mcp: string, url: string): Remedy =>
    perSurface`${ROWS.wrong_transport.remedy}${
      ": for this mode run the server separately and set " +
      `"transport_type": "${mcp}", "url": "${url}" — or start it in its stdio mode`
    }`,
  /** A process that started an HTTP server instead of speaking MCP on stdio. */
  startedHttp: perSurface`${ROWS.wrong_transport.remedy}${
    ": start the program in its stdio mode, or run it " +
    'separately and connect with "transport_type": "streamable_http" and its "url"'
  }`,
  /** A package runner (npx, uvx, …) still installing when the time was up. */
  installing: (commandLine: string, runner: string): string =>
    `run ${commandLine} by hand once, so that ${runner} finishes installing it and shows ` +
    'what fails; on a slow connection raise "timeout" in the server entry',
  /** A stdio process that did not answer initialize in time. */
  stdioTimeout: (commandLine: string): string =>
    `raise "timeout" in the server entry (a first \`npx -y\` run downloads the package), ` +
    `and check that ${commandLine} starts an MCP server speaking stdio`,
  /** A stdio handshake that failed otherwise. */
  notMcp: (commandLine: string): string =>
    `run the command by hand to check it is an MCP server speaking stdio: ${commandLine}`,
  /** The working directory of a stdio server is missing. */
  missingCwd: 'create it, or fix "cwd" in the server entry',
  /** A command given as a path that does not exist. */
  missingCommand: 'fix the path in "command", or install the server there',
  /** A command not found on PATH; `from`: where such programs come from, when known. */
  notOnPath: (command: string, from: string | undefined): string =>
    (from ? `install ${from}, ` : "install it, ") +
    `or give the full path to '${command}' in "command"`,
  /** A command that cannot be executed. */
  notExecutable: (command: string): string =>
    `make it executable (chmod +x ${command}) or point "command" at the right file`,
  /** A command that could not be started for another reason. */
  notStarted: 'check "command", "args" and "cwd" in the server entry',
  /** A proxy variable patchbay cannot use. */
  badProxy: "set the variable to the proxy's address, e.g. http://proxy.example.com:3128 (in " +
    ".env or the environment), or remove it; NO_PROXY lists hosts to reach directly",
  /** Nothing listens at an HTTP server's address. */
  refused:
    perSurface`${ROWS.not_running.remedy}; if it is running, check the port it listens on and fix "url"`,
  /** An address that accepts connections but does not speak HTTP. */
  notHttp: perSurface`${ROWS.wrong_transport.remedy}${
    "; a server started as a local command speaks stdio: set " +
    '"transport_type": "stdio" with its "command"'
  }`,
  /** Nothing serves MCP at the URL's path. */
  wrongPath:
    perSurface`${ROWS.wrong_address.remedy}, including its path (often /mcp, or /sse for SSE)`,
  /** The URL speaks the other HTTP transport, `speaks`. */
  otherTransport: (speaks: string): Remedy =>
    perSurface`${ROWS.wrong_transport.remedy}: set "transport_type": "${speaks}"`,
  /** The server refused the token sent in "headers". */
  tokenRejected: "check the token in the Authorization header (expired, revoked, or for " +
    "another server); the value can come from .env with ${VAR}",
  /** A server that requires OAuth, configured without it. */
  addOAuth: 'add "auth": {"method": "oauth"} to the server entry',
  /** A server that requires credentials and publishes no OAuth metadata. */
  sendToken: 'send a token with "headers": {"Authorization": "Bearer <ACCESS_TOKEN>"}',
  /** A failure of a server being restarted: its `remedies`, and that patchbay keeps trying. */
  whileRestarting: (remedies: Remedy): Remedy => perSurface`${remedies}; meanwhile ${RESTARTING}`,
  /** A server still connecting when Ctrl+C went on without it. */
  connectSkipped: 'run it again and let the server connect (raise "timeout" in its entry if ' +
    "it is slow to start); `patchbay doctor` checks it on its own",
  /** An OAuth server that needs a browser login `server` this run may not start. */
  loginRequired: (server: string): string =>
    `log in now with \`patchbay auth login ${server}\`, or let the next session open ` +
    "the browser (the callback arrives at http://localhost:3000/callback)",
  /** A server's error answer to a request. */
  requestRefused: "check the name and arguments (the server's message above says what it " +
    "expected)",
  /** A list (prompts, resources) a server failed to give: nothing is wrong on patchbay's side. */
  listWarning: "nothing to fix in patchbay (the server's other lists and its tools work); if " +
    "you need that list, report the failing request to the server's authors",
  /** A tool of `server` its include_tools / exclude_tools withhold. */
  toolFiltered: (server: string): Remedy => {
    const change = `to use it, change mcpServers.${server}'s include_tools / exclude_tools in ` +
      "the configuration";
    return { repl: `${change} (then /refresh)`, script: `${change} (then run the command again)` };
  },
  /** A mention of a resource of a server that offers none. */
  mentionNoResources: {
    repl: "remove the mention and send the message again (ask for the content in words " +
      "and the model can use the server's tools); /resources lists the servers' resources",
    script: "remove the mention and run the command again (ask for the content in words " +
      "and the model can use the server's tools); `patchbay resources` lists the servers' " +
      "resources",
  },
  /** A mentioned resource of `server` that could not be read. */
  checkTheUri: (server: string): Remedy => ({
    repl: `check the URI with /resources or \`patchbay resources\` (in the REPL, Tab after ` +
      `@${server}: completes it), or remove the mention and send the message again`,
    script: `check the URI with \`patchbay resources ${server}\`, or remove the mention and ` +
      "run the command again",
  }),
} as const;
