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

/** Where {@linkcode certificateFromPrivateCa} wrote its files (PEM). */
export interface PrivateCaFiles extends CertificateFiles {
  /** The CA certificate that signed `cert`: what DENO_CERT would name. */
  ca: string;
}

/**
 * Makes a CA of its own and a certificate for `localhost` and `127.0.0.1` signed by it,
 * with `openssl` in `dir`: what a TLS-inspecting proxy presents, an issuer nobody trusts
 * until its CA certificate is (`invalid peer certificate: UnknownIssuer`).
 */
export async function certificateFromPrivateCa(dir: string): Promise<PrivateCaFiles> {
  const file = (name: string) => join(dir, name);
  const steps = [
    [
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", file("ca-key.pem")],
      ...["-out", file("ca.pem"), "-days", "1", "-subj", "/CN=patchbay test CA"],
    ],
    [
      ...["req", "-newkey", "rsa:2048", "-nodes", "-keyout", file("key.pem")],
      ...["-out", file("leaf.csr"), "-subj", "/CN=localhost"],
    ],
    [
      ...["x509", "-req", "-in", file("leaf.csr"), "-CA", file("ca.pem")],
      ...["-CAkey", file("ca-key.pem"), "-CAcreateserial", "-out", file("cert.pem")],
      ...["-days", "1", "-extfile", file("leaf.ext")],
    ],
  ];
  await Deno.writeTextFile(
    file("leaf.ext"),
    "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
  );
  for (const args of steps) {
    const openssl = await new Deno.Command("openssl", { args, stdout: "null", stderr: "piped" })
      .output();
    assert.equal(openssl.code, 0, new TextDecoder().decode(openssl.stderr));
  }
  return { ca: file("ca.pem"), cert: file("cert.pem"), key: file("key.pem") };
}
