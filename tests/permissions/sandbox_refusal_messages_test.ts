/**
 * Deno sandbox refusals, wherever they surface, become messages naming the flag to add;
 * and the environment is read by name when Deno grants only a list of variables.
 */

import assert from "node:assert/strict";
import { resolve } from "node:path";
import { parseConfig } from "../../lib/config/load.ts";
import { createEnvironment, type ProcessVariables } from "../../lib/env.ts";
import { DenoPermissionError, OAuthLoginRequiredError } from "../../lib/errors.ts";
import { denoPermissionFlag, findDenoDenial } from "../../lib/deno_permission/denial.ts";
import { denoPermissionRemedy } from "../../lib/deno_permission/remedy.ts";
import { createOpenAiProvider } from "../../lib/llm/openai_provider.ts";
import { diagnoseConnectError } from "../../lib/redis/errors.ts";
import { resolveRedisSettings } from "../../lib/redis/settings.ts";
import { AuthorizationBroker } from "../../lib/oauth/broker.ts";
import { DENO } from "../support/deps.ts";

function denial(kind: string, value: string): Error {
  return new Deno.errors.NotCapable(
    `Requires ${kind} access to "${value}", run again with the --allow-${kind} flag`,
  );
}

/** A process environment where Deno refuses `refused` and has `values`. */
function narrowEnvironment(values: Record<string, string>, refused: string[]): ProcessVariables {
  return {
    get: (name) => values[name],
    names: () => Object.keys(values),
    denied: (name) => refused.includes(name),
  };
}

Deno.test("the flag is found behind wrappers, and relative paths become absolute", () => {
  const wrapped = new TypeError("fetch failed", {
    cause: new Error("connect", { cause: denial("net", "api.openai.com:443") }),
  });
  assert.equal(denoPermissionFlag(wrapped), "--allow-net=api.openai.com:443");
  assert.equal(
    denoPermissionFlag(new AggregateError([new Error("x"), denial("run", "node")])),
    "--allow-run=node",
  );
  assert.equal(denoPermissionFlag(denial("read", ".env")), `--allow-read=${resolve(".env")}`);
  assert.equal(denoPermissionFlag(new Error("plain")), undefined);
  const cyclic = new Error("a") as Error & { cause?: unknown };
  cyclic.cause = cyclic;
  assert.equal(findDenoDenial(cyclic), undefined);
});

Deno.test("a ${VAR} Deno may not read is named as such, not as unset", () => {
  const env = createEnvironment(narrowEnvironment({}, ["TOKEN"]));
  assert.throws(
    () =>
      parseConfig(
        JSON.stringify({
          LLM: { provider: "openai", model: "m" },
          mcpServers: { r: { url: "http://h/mcp", headers: { Authorization: "Bearer ${TOKEN}" } } },
        }),
        "servers_config.json",
        env,
      ),
    (error: Error & { details?: string[] }) => {
      const text = [error.message, ...(error.details ?? [])].join("\n");
      assert.match(text, /TOKEN cannot be read: Deno did not grant --allow-env=TOKEN/);
      return true;
    },
  );
});

Deno.test("LLM_API_KEY refused by Deno: Permission denied naming --allow-env=LLM_API_KEY", () => {
  const env = createEnvironment(narrowEnvironment({}, ["LLM_API_KEY"]));
  assert.throws(
    () =>
      createOpenAiProvider({
        env,
        llm: {
          provider: "openai",
          model: "gpt-4o-mini",
          maxTokens: 10,
          maxContextLength: 1000,
          timeoutSeconds: 5,
          maxRetries: 0,
        },
      }),
    (error: unknown) => {
      assert.ok(error instanceof DenoPermissionError);
      assert.equal(error.flag, "--allow-env=LLM_API_KEY");
      assert.equal(error.message, "Permission denied: reading LLM_API_KEY");
      return true;
    },
  );
  // The same key from .env is used: a refused process variable is only a missing one.
  const fromFile = createEnvironment(
    narrowEnvironment({}, ["LLM_API_KEY"]),
    new Map([["LLM_API_KEY", "sk-from-the-file"]]),
  );
  assert.equal(fromFile.get("LLM_API_KEY"), "sk-from-the-file");
});

Deno.test("Redis refused by Deno: the store's message names --allow-net", () => {
  const settings = resolveRedisSettings(
    { backend: "redis", keyPrefix: "patchbay" },
    createEnvironment({ REDIS_HOST: "127.0.0.1", REDIS_PORT: "6390" }),
  );
  const error = diagnoseConnectError(new Error("x", { cause: denial("net", "127.0.0.1:6390") }), {
    settings,
    budgetMs: 1500,
    purpose: "memory",
  });
  assert.equal(
    error.message,
    "Could not connect to Redis at 127.0.0.1:6390 db 0: Permission denied: --allow-net=127.0.0.1:6390 was not granted",
  );
  assert.match(error.remedy, /^add --allow-net=127\.0\.0\.1:6390 to the deno run/);
});

Deno.test("a non-interactive OAuth broker refuses a login before binding the port", async () => {
  const opened: string[] = [];
  const broker = new AuthorizationBroker({
    interactive: false,
    opener: (url) => {
      opened.push(url.href);
      return Promise.resolve({ opened: true });
    },
  });
  await assert.rejects(
    broker.authorize(
      {
        server: "notion",
        url: new URL("https://auth.example/authorize"),
        issRequired: false,
        state: "s",
        reason: "login",
      },
      () => Promise.resolve(),
    ),
    (error: unknown) => {
      assert.ok(error instanceof OAuthLoginRequiredError);
      assert.match(error.reason, /a browser login is needed \(no usable login is stored\)/);
      assert.match(error.remedy, /patchbay auth login notion/);
      return true;
    },
  );
  assert.equal(broker.listener.listening, false);
  assert.deepEqual(opened, []);
  await broker.close();
});

Deno.test("under --allow-env=<names> the environment is read by name", async () => {
  const envModule = new URL("../../lib/env.ts", import.meta.url).href;
  const script = `
    import { loadEnvironment } from "${envModule}";
    const env = await loadEnvironment({ path: "/nonexistent/.env" });
    console.log(JSON.stringify({
      granted: env.get("PATCHBAY_GRANTED"),
      other: env.get("PATCHBAY_OTHER") ?? null,
      deniedOther: env.denied("PATCHBAY_OTHER"),
      deniedGranted: env.denied("PATCHBAY_GRANTED"),
      names: env.names(),
    }));
  `;
  const output = await denoScript(
    script,
    ["--allow-env=PATCHBAY_GRANTED", "--allow-read=/nonexistent"],
    { PATCHBAY_GRANTED: "yes", PATCHBAY_OTHER: "hidden" },
  );
  const decoder = new TextDecoder();
  assert.equal(output.code, 0, decoder.decode(output.stderr));
  assert.deepEqual(JSON.parse(decoder.decode(output.stdout)), {
    granted: "yes",
    other: null,
    deniedOther: true,
    deniedGranted: false,
    names: ["PATCHBAY_GRANTED"],
  });
});

Deno.test("the OAuth callback listener refused by Deno names --allow-net for its address", async () => {
  const callbackModule = new URL("../../lib/oauth/callback.ts", import.meta.url).href;
  const script = `
    import { CallbackListener } from "${callbackModule}";
    try {
      await new CallbackListener({ port: 3999 }).start("notion");
      console.log("listening");
    } catch (error) {
      console.log(JSON.stringify({ message: error.message, remedy: error.remedy, flag: error.flag }));
    }
  `;
  const output = await denoScript(script);
  const decoder = new TextDecoder();
  assert.equal(output.code, 0, decoder.decode(output.stderr));
  const result = JSON.parse(decoder.decode(output.stdout));
  assert.equal(result.flag, "--allow-net=127.0.0.1:3999");
  assert.equal(
    result.message,
    "Permission denied: listening on 127.0.0.1:3999 for the OAuth callback of server 'notion'",
  );
  assert.match(result.remedy, /^add --allow-net=127\.0\.0\.1:3999 to the deno run/);
});

/** `deno run --no-prompt <flags> -` with `script` on stdin (and `env` added); its output. */
async function denoScript(
  script: string,
  flags: string[] = [],
  env?: Record<string, string>,
): Promise<Deno.CommandOutput> {
  const child = new Deno.Command(DENO, {
    args: ["run", "--no-prompt", ...flags, "-"],
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(script));
  await writer.close();
  return await child.output();
}

Deno.test("one remedy for every refusal: launcher advice under the launcher, the flag on a direct run", () => {
  const settings = resolveRedisSettings(
    { backend: "redis", keyPrefix: "patchbay" },
    createEnvironment({ REDIS_HOST: "127.0.0.1", REDIS_PORT: "6390" }),
  );
  const remedies = () => {
    const redis = diagnoseConnectError(new Error("x", { cause: denial("net", "127.0.0.1:6390") }), {
      settings,
      budgetMs: 1500,
      purpose: "memory",
    });
    const variable = (() => {
      try {
        parseConfig(
          JSON.stringify({
            LLM: { provider: "openai", model: "m" },
            mcpServers: { r: { url: "http://h/mcp", headers: { A: "${TOKEN}" } } },
          }),
          "servers_config.json",
          createEnvironment(narrowEnvironment({}, ["TOKEN"])),
        );
      } catch (error) {
        return ((error as { details?: string[] }).details ?? []).join("\n");
      }
      throw new Error("the unreadable variable was not reported");
    })();
    return {
      error: new DenoPermissionError("--allow-read=/etc/x", "reading /etc/x").remedy,
      redis: redis.remedy,
      variable,
      oauth: denoPermissionRemedy("--allow-net=idp.example:443", { authorizationServer: true }),
    };
  };
  const saved = [Deno.env.get("PATCHBAY_LAUNCHER"), Deno.env.get("PATCHBAY_RESTART_FILE")];
  try {
    Deno.env.delete("PATCHBAY_LAUNCHER");
    Deno.env.delete("PATCHBAY_RESTART_FILE");
    const direct = remedies();
    assert.equal(
      direct.error,
      "add --allow-read=/etc/x to the deno run / deno install command " +
        "(`patchbay permissions` prints the full set for your configuration)",
    );
    assert.match(direct.redis, /^add --allow-net=127\.0\.0\.1:6390 to the deno run/);
    assert.match(
      direct.variable,
      /add --allow-env=TOKEN to the deno run \/ deno install command .*; or set TOKEN in \.env/,
    );
    assert.match(direct.oauth, /^add --allow-net=idp\.example:443 to the deno run/);

    Deno.env.set("PATCHBAY_LAUNCHER", "narrow");
    const launched = remedies();
    for (const [where, remedy] of Object.entries(launched)) {
      assert.match(remedy, /\/refresh in the interactive client, or restart patchbay/, where);
      assert.doesNotMatch(remedy, /deno run \/ deno install/, where);
    }
    assert.match(launched.variable, /; or set TOKEN in \.env/);

    // Where the launcher can restart the client, it discovers the authorization server.
    Deno.env.set("PATCHBAY_RESTART_FILE", "/tmp/restart.json");
    assert.match(
      remedies().oauth,
      /^patchbay finds the authorization server and restarts under a plan that includes it/,
    );
  } finally {
    const names = ["PATCHBAY_LAUNCHER", "PATCHBAY_RESTART_FILE"];
    names.forEach((name, i) =>
      saved[i] === undefined ? Deno.env.delete(name) : Deno.env.set(name, saved[i]!)
    );
  }
});
