/**
 * The MCP server SDK, which only the tests use (the protocol tests' in-process server, the
 * protected resource server, the authorization server, the auth proxy; the benchmarks reach
 * it through those harnesses). patchbay itself ships only the client SDK, so this test-only
 * dependency is pinned here, in one place, and kept out of deno.json's import map.
 *
 * @module
 */

export * from "npm:@modelcontextprotocol/server@2.4.0";

/** The server side of Skills over MCP (SEP-2640), for the skills fixture server. */
export { skillEntry, SkillsExtension } from "npm:@modelcontextprotocol/server@2.4.0/ext/skills";
export type { Skill, SkillSource } from "npm:@modelcontextprotocol/server@2.4.0/ext/skills";
/** stdio for the fixture servers written with the SDK. */
export { StdioServerTransport } from "npm:@modelcontextprotocol/server@2.4.0/stdio";
