/**
 * The MCP server SDK, which only the tests use (the protocol tests' in-process server, the
 * protected resource server, the authorization server, the auth proxy; the benchmarks reach
 * it through those harnesses). patchbay itself ships only the client SDK, so this test-only
 * dependency is pinned here, in one place, and kept out of deno.json's import map.
 *
 * @module
 */

export * from "npm:@modelcontextprotocol/server@2.4.0";
