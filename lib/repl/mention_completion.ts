/**
 * Tab completion of `@server:uri` mentions: server names (those offering resources), then
 * the server's resource URIs and resource templates; once a template's fixed part is
 * typed, its variable is completed with the server's own completions
 * (`completion/complete` for the template). A candidate is one word: a resource's URI or a
 * completion holding whitespace is not offered.
 *
 * @module
 */

import type { ClientSession } from "../session/client_session.ts";

/** Completions of the mention being typed at the end of `line`, or `undefined`. */
export async function completeMention(
  s: ClientSession,
  line: string,
): Promise<{ candidates: string[]; replace: string } | undefined> {
  const word = /(?:^|[\s([{"'`<])(@\S*)$/.exec(line)?.[1];
  if (word === undefined) return undefined;
  const resources = s.manager.resources();
  const templates = s.manager.resourceTemplates();
  const colon = word.indexOf(":");
  if (colon < 0) {
    const servers = [...new Set([...resources, ...templates].map((r) => r.server))];
    const candidates = servers.map((name) => `@${name}:`).filter((c) => c.startsWith(word));
    return { candidates, replace: word };
  }
  const server = word.slice(1, colon);
  const typed = word.slice(colon + 1);
  const candidates = resources
    .filter((r) => r.server === server && r.uri.startsWith(typed))
    .map((r) => `@${server}:${r.uri}`);
  for (const template of templates.filter((t) => t.server === server)) {
    const fixed = template.uriTemplate.split("{")[0];
    if (fixed.startsWith(typed) && fixed !== typed) {
      candidates.push(`@${server}:${fixed}`);
      continue;
    }
    const variable = /^\{[+#./;?&]?([^}]+)\}$/.exec(template.uriTemplate.slice(fixed.length))?.[1];
    if (!typed.startsWith(fixed) || !variable) continue;
    const completion = await s.manager.complete(server, {
      ref: { type: "ref/resource", uri: template.uriTemplate },
      argument: { name: variable, value: typed.slice(fixed.length) },
    });
    candidates.push(...completion.values.map((value) => `@${server}:${fixed}${value}`));
  }
  // A mention ends at whitespace: a candidate holding some would put a second word, the
  // server's and perhaps another mention, into the line the person sends.
  const oneWord = [...new Set(candidates)].filter((c) => c.startsWith(word) && !/\s/.test(c));
  return { candidates: oneWord, replace: word };
}
