/**
 * How a subsystem states what it needs of Deno's sandbox: each folder that needs a grant
 * (the model client, the transports, OAuth, memory, hooks, secrets, …) exports a function
 * of the {@linkcode PermissionNeeds} shape beside its code, and the permission plan
 * (lib/permissions/plan.ts) calls them from one list. The plan sits at the top of the
 * house, so what the subsystems share with it lives here, in a leaf any module may use.
 *
 * A leaf: it imports nothing.
 *
 * @module
 */

/** The permission kinds patchbay can need, as Deno names them. */
export type PermissionKind = "read" | "write" | "net" | "run" | "env" | "sys";

/** One value of one permission (a path, `host:port`, a command, a variable). */
export interface Grant {
  kind: PermissionKind;
  value: string;
  /** Why patchbay needs it, for the listing and the doctor's findings. */
  why: string;
}

/** Where a subsystem's needs go: the plan's builder, which merges duplicates. */
export interface NeedsSink {
  /** Needs `value` of `kind`; the same grant stated twice keeps both reasons. */
  add(kind: PermissionKind, value: string, why: string): void;
  /** Something that cannot be known in advance, and what to do about it. */
  note(text: string): void;
  /** Needs the whole environment rather than named variables, for the reason given. */
  allEnv(why: string): void;
}

/** The facts about the machine every subsystem may read (a part of the plan's inputs). */
export interface MachineFacts {
  /** Process environment over .env. */
  env: { get(name: string): string | undefined };
  /** @default Deno.build.os */
  os?: typeof Deno.build.os;
  /** The working directory, for relative commands. */
  cwd: string;
  /**
   * The path Deno checks for a command: found on `searchPath`, relative paths against
   * `cwd`. `undefined`: not found.
   */
  resolveCommand(command: string, searchPath: string | undefined, cwd: string): string | undefined;
}

/**
 * A subsystem's declaration of its needs: adds to `plan` what it needs for `inputs` (the
 * part of the plan's inputs it reads, which it names in its own type).
 */
export type PermissionNeeds<Inputs, Sink extends NeedsSink = NeedsSink> = (
  plan: Sink,
  inputs: Inputs,
) => void;

/** `host:port` of an address as Deno's net permission names it (IPv6 in brackets). */
export function netAddress(address: { host: string; port: number }): string {
  return `${address.host.includes(":") ? `[${address.host}]` : address.host}:${address.port}`;
}
