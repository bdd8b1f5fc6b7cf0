/**
 * Whether a value read back from a trace file has the shape of a trace line
 * (`record.ts`): each field the timeline and the statistics use has its type. A trace
 * file is any file a person names, written by anyone: a line with `"t": 5` or
 * `"bytes": "many"` is not a trace line, and is skipped and counted rather than shown
 * wrong or failing the command.
 *
 * Pure: no I/O.
 *
 * @module
 */

import type { TraceLine } from "./record.ts";

type Fields = Record<string, unknown>;

const isString = (value: unknown): value is string => typeof value === "string";
const isNumber = (value: unknown): value is number =>
  typeof value === "number" && Number.isFinite(value);
const optional = (check: (value: unknown) => boolean) => (value: unknown) =>
  value === undefined || check(value);
const isObject = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isHeaders = (value: unknown) =>
  isObject(value) && Object.values(value).every((v) => isString(v));

/** The fields every kind of line shares, and each kind's own, with their checks. */
const SHAPES: Readonly<Record<TraceLine["kind"], Readonly<Fields>>> = {
  message: {
    server: isString,
    dir: (v: unknown) => v === "in" || v === "out",
    type: (v: unknown) => ["request", "notification", "result", "error"].includes(v as string),
    id: optional((v) => isString(v) || isNumber(v)),
    method: optional(isString),
    ms: optional(isNumber),
    bytes: optional(isNumber),
    error: optional((v) =>
      isObject(v) && optional(isNumber)(v.code) && optional(isString)(v.message)
    ),
    cut: optional((v) => isObject(v) && isNumber(v.kept) && isNumber(v.chars)),
    trace_id: optional(isString),
    span_id: optional(isString),
  },
  http: {
    server: isString,
    method: isString,
    url: isString,
    status: optional(isNumber),
    failure: optional(isString),
    ms: optional(isNumber),
    request: optional(isHeaders),
    response: optional(isHeaders),
    request_bytes: optional(isNumber),
    response_bytes: optional(isNumber),
  },
  event: { server: optional(isString), event: isString },
  model: { server: optional(isString), trace_id: optional(isString), span_id: optional(isString) },
};

/** Whether `value` is a trace line whose fields all have the types the reader relies on. */
export function isTraceLine(value: unknown): value is TraceLine {
  if (!isObject(value) || !isString(value.t) || !isString(value.kind)) return false;
  const shape = Object.hasOwn(SHAPES, value.kind)
    ? SHAPES[value.kind as TraceLine["kind"]]
    : undefined;
  if (!shape) return false;
  return Object.entries(shape).every(([field, check]) =>
    (check as (value: unknown) => boolean)(value[field])
  );
}
