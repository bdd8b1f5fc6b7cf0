/**
 * The problems and warnings found in one configuration file, each placed at its field's
 * position in the text (the value, the key, or the nearest enclosing value).
 *
 * @module
 */

import type { ConfigProblem, SourcePosition } from "../errors.ts";
import { type JsonParseResult, pathKey } from "./json.ts";
import { formatPath } from "./problems.ts";

/** A field path: object keys and array indexes. */
export type FieldPath = (string | number)[];

/** Collects a file's problems and warnings, in the order they are found. */
export class ProblemList {
  readonly problems: ConfigProblem[] = [];
  readonly warnings: ConfigProblem[] = [];

  constructor(private readonly parsed: JsonParseResult) {}

  /** A problem at `path`; placed at `position`, else at the value (or the nearest one). */
  add(path: FieldPath, message: string, hint?: string, position?: SourcePosition): void {
    this.problems.push({
      path: formatPath(path),
      message,
      hint,
      position: position ?? this.valuePos(path) ?? this.#nearestPos(path),
    });
  }

  /** `Missing required field: <path>`, placed at the object that lacks it. */
  missing(path: FieldPath, hint?: string): void {
    this.add(
      path,
      `Missing required field: ${formatPath(path)}`,
      hint,
      this.valuePos(path.slice(0, -1)) ?? { line: 1, column: 1 },
    );
  }

  /** Something worth saying that does not stop the client. */
  warn(path: FieldPath, message: string, hint: string): void {
    this.warnings.push({ path: formatPath(path), message, hint });
  }

  /** Where the value at `path` starts. */
  valuePos(path: FieldPath): SourcePosition | undefined {
    return this.parsed.valuePositions.get(pathKey(path));
  }

  /** Where the key of `path` starts (its value's position for array items). */
  keyPos(path: FieldPath): SourcePosition | undefined {
    return this.parsed.keyPositions.get(pathKey(path)) ?? this.valuePos(path);
  }

  #nearestPos(path: FieldPath): SourcePosition | undefined {
    for (let i = path.length - 1; i >= 0; i--) {
      const found = this.valuePos(path.slice(0, i));
      if (found) return found;
    }
    return undefined;
  }
}
