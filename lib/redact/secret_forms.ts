/**
 * The forms a secret can be echoed in that are cheap to recognise: as written, base64
 * (standard and URL-safe, at each of the three byte alignments, so a token inside a
 * longer encoded text such as `Authorization: Bearer …` is found too), percent-encoded
 * and JSON-escaped. A hostile server that reflects what patchbay sent it in one of these
 * forms is masked as if it had sent the secret itself.
 *
 * @module
 */

/** Encoded fragments shorter than this are not looked for: they match ordinary text. */
export const MIN_FORM_LENGTH = 8;

const encoder = new TextEncoder();

/** `bytes` in standard base64. */
function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * The part of the base64 of `secret` that is the same whatever surrounds it, for each
 * alignment: `shift` bytes before it change the first characters, and the bytes after it
 * the last incomplete group, so only whole groups made of the secret's own bytes are kept.
 */
function base64Cores(secret: Uint8Array): string[] {
  const cores: string[] = [];
  for (const shift of [0, 1, 2]) {
    const padded = new Uint8Array(shift + secret.length);
    padded.set(secret, shift);
    const encoded = base64(padded);
    // Characters that hold bits of the padding bytes: none, 2, or 3.
    const skip = shift === 0 ? 0 : shift + 1;
    const whole = Math.floor(padded.length / 3) * 4;
    cores.push(encoded.slice(skip, whole));
  }
  return cores;
}

/** `secret` and the encodings of it worth looking for (see the module doc). */
export function secretForms(secret: string): string[] {
  const forms = new Set<string>([secret]);
  const bytes = encoder.encode(secret);
  const full = base64(bytes);
  for (const encoded of [full, full.replace(/=+$/, ""), ...base64Cores(bytes)]) {
    forms.add(encoded);
    forms.add(encoded.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  forms.add(encodeURIComponent(secret));
  forms.add(JSON.stringify(secret).slice(1, -1));
  return [...forms].filter((form) => form === secret || form.length >= MIN_FORM_LENGTH);
}
