/**
 * Which processes a command starts before it connects (`stdioSpawnSpecs`): a server the
 * administrator's policy refuses is never among them, nor a disabled or remote one.
 *
 * @module
 */

import assert from "node:assert/strict";
import { stdioSpawnSpecs } from "../../lib/transports/spawn.ts";

Deno.test("spawn specs: only enabled stdio servers the policy does not refuse are started", () => {
  const specs = stdioSpawnSpecs([
    { transport: "stdio", command: "allowed-server", args: ["a"] },
    {
      transport: "stdio",
      command: "refused-server",
      refused: { file: "/etc/patchbay/managed.json" },
    },
    { transport: "stdio", command: "disabled-server", disabled: true },
    { transport: "streamable_http" },
  ], () => undefined);
  assert.deepEqual(specs.map((spec) => [spec.command, spec.args]), [["allowed-server", ["a"]]]);
});
