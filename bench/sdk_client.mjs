// The plain SDK client the start-up benchmark measures patchbay against: Node, the MCP
// SDK's own Client and stdio transport (the version the test servers depend on), nothing
// else. It connects `count` server-everything processes in parallel, lists their tools,
// prints how many it saw, closes them the SDK's way and exits.
//
// Usage: node bench/sdk_client.mjs <test-deps folder> <count>

import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [deps, count = "1"] = process.argv.slice(2);
const sdk = join(deps, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client");
const { Client } = await import(pathToFileURL(join(sdk, "index.js")).href);
const { StdioClientTransport } = await import(pathToFileURL(join(sdk, "stdio.js")).href);
const everything = join(
  deps,
  "node_modules",
  "@modelcontextprotocol",
  "server-everything",
  "dist",
  "index.js",
);

const clients = await Promise.all(
  Array.from({ length: Number(count) }, async () => {
    const client = new Client({ name: "plain-sdk-client", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({ command: "node", args: [everything, "stdio"], stderr: "ignore" }),
    );
    return client;
  }),
);
const lists = await Promise.all(clients.map((client) => client.listTools()));
console.log(JSON.stringify({ tools: lists.reduce((sum, list) => sum + list.tools.length, 0) }));
await Promise.all(clients.map((client) => client.close()));
process.exit(0);
