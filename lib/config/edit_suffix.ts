/**
 * The file an edit of the configuration (or .env) is written to before it replaces the
 * original: the editing commands write it (`config/edit.ts`) and the launcher grants it
 * (`permissions/editor_flags.ts`). A leaf, so neither imports the other.
 *
 * @module
 */

/** The suffix of the file an edit is written to before it replaces the original. */
export const EDIT_SUFFIX = ".patchbay-edit";
