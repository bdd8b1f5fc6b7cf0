/**
 * A certificate made at test time, so a TLS test needs no key kept in the repository.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";

/** Where {@linkcode selfSignedCertificate} wrote the certificate and its key (PEM). */
export interface CertificateFiles {
  cert: string;
  key: string;
}

/**
 * Makes a self-signed certificate for `localhost` and `127.0.0.1`, valid one day, with
 * `openssl` in `dir` (`cert.pem`, `key.pem`); the certificate is its own CA.
 */
export async function selfSignedCertificate(dir: string): Promise<CertificateFiles> {
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  const openssl = await new Deno.Command("openssl", {
    args: [
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert],
      ...["-days", "1", "-subj", "/CN=localhost"],
      ...["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
    ],
    stdout: "null",
    stderr: "null",
  }).output();
  assert.equal(openssl.code, 0, "openssl could not make a certificate");
  return { cert, key };
}
