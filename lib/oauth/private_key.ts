/**
 * The secret parts of a client's private key (`auth.private_key`, `auth.private_key_file`),
 * for the redactor: the key as given, each line of a PEM body (a log line may hold one),
 * and a JWK's private members. No dependencies: start-up registers them before anything
 * is logged.
 *
 * @module
 */

/** JWK members that are private (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2). */
const PRIVATE_JWK_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "k"];

/** Every string of `key` that must never be shown. */
export function privateKeySecrets(key: string | undefined): string[] {
  if (!key) return [];
  const secrets = [key, key.trim()];
  for (const line of key.split(/\r?\n/)) {
    if (!line.startsWith("-----")) secrets.push(line.trim());
  }
  try {
    const jwk = JSON.parse(key) as Record<string, unknown>;
    for (const member of PRIVATE_JWK_MEMBERS) {
      if (typeof jwk[member] === "string") secrets.push(jwk[member] as string);
    }
  } catch {
    // A PEM: its lines are above.
  }
  return secrets;
}
