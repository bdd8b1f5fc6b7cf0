/**
 * The problems and warnings found in a configuration, each placed at its field's position
 * in the text (the value, the key, or the nearest enclosing value): of one file, or of the
 * files merged into one configuration (lib/config/merge.ts), where each problem also names
 * the file its field was written in.
 *
 * @module
 */

import type { ConfigProblem, SourcePosition } from "../errors.ts";
import { type JsonParseResult, pathKey } from "./json.ts";
import { formatPath } from "./problems.ts";

/** A field path: object keys and array indexes. */
export type FieldPath = (string | number)[];

/**
 * Where the fields of a configuration are written: their positions, and the file of each
 * when several files make the configuration.
 */
export interface FieldLocator {
  /** Where the value at `path` starts. */
  value(path: FieldPath): SourcePosition | undefined;
  /** Where the key of `path` starts. */
  key(path: FieldPath): SourcePosition | undefined;
  /** The file the field at `path` is written in; `undefined`: the one file there is. */
  file?(path: FieldPath): string | undefined;
}

/** The positions of one parsed file. */
export function parsedLocator(parsed: JsonParseResult): FieldLocator {
  return {
    value: (path) => parsed.valuePositions.get(pathKey(path)),
    key: (path) => parsed.keyPositions.get(pathKey(path)),
  };
}

/** Collects a configuration's problems and warnings, in the order they are found. */
export class ProblemList {
  readonly problems: ConfigProblem[] = [];
  readonly warnings: ConfigProblem[] = [];
  readonly #locate: FieldLocator;

  constructor(source: JsonParseResult | FieldLocator) {
    this.#locate = "valuePositions" in source ? parsedLocator(source) : source;
  }

  /**
   * A problem at `path`; placed at `position`, else at the value (or the nearest one); in
   * `inFile` when given (a position of that file), else in the file of the field.
   */
  add(
    path: FieldPath,
    message: string,
    hint?: string,
    position?: SourcePosition,
    inFile?: string,
  ): void {
    const file = inFile ?? this.#locate.file?.(path);
    this.problems.push({
      path: formatPath(path),
      message,
      hint,
      position: position ?? this.valuePos(path) ?? this.#nearestPos(path),
      ...(file === undefined ? {} : { file }),
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
    const file = this.#locate.file?.(path);
    this.warnings.push({ path: formatPath(path), message, hint, ...(file ? { file } : {}) });
  }

  /** Where the value at `path` starts. */
  valuePos(path: FieldPath): SourcePosition | undefined {
    return this.#locate.value(path);
  }

  /** Where the key of `path` starts (its value's position for array items). */
  keyPos(path: FieldPath): SourcePosition | undefined {
    return this.#locate.key(path) ?? this.valuePos(path);
  }

  #nearestPos(path: FieldPath): SourcePosition | undefined {
    for (let i = path.length - 1; i >= 0; i--) {
      const found = this.valuePos(path.slice(0, i));
      if (found) return found;
    }
    return undefined;
  }
}
