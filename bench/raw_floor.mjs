// The raw JSON-RPC floor of listing one stdio server (issue 36): spawn server-everything
// with no SDK, send initialize, the initialized notification and tools/list as JSON lines,
// and exit on the tools/list answer. Nothing a client could skip is left to measure above it.
//
// Usage: node bench/raw_floor.mjs <test-deps folder>

import { spawn } from "node:child_process";
import { join } from "node:path";

const [deps] = process.argv.slice(2);
const everything = join(
  deps,
  "node_modules",
  "@modelcontextprotocol",
  "server-everything",
  "dist",
  "index.js",
);
const server = spawn("node", [everything, "stdio"], { stdio: ["pipe", "pipe", "ignore"] });
const send = (message) => server.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
let buffered = "";
server.stdout.on("data", (chunk) => {
  buffered += chunk;
  let newline;
  while ((newline = buffered.indexOf("\n")) >= 0) {
    const message = JSON.parse(buffered.slice(0, newline));
    buffered = buffered.slice(newline + 1);
    if (message.id === 1) {
      send({ method: "notifications/initialized" });
      send({ id: 2, method: "tools/list" });
    } else if (message.id === 2) {
      console.log(JSON.stringify({ tools: message.result.tools.length }));
      server.kill();
      process.exit(0);
    }
  }
});
send({
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "raw-floor", version: "1.0.0" },
  },
});
