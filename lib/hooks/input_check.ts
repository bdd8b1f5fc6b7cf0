/**
 * A tool input a hook rewrote (`updatedInput`), checked against the tool's input schema
 * before the call is made: an input the schema refuses, or one that cannot be checked (a
 * schema the validator cannot compile), is never sent. The validator is the one the MCP
 * SDK checks tools' structured results with, loaded only when a hook rewrites an input.
 *
 * @module
 */

/** What is wrong with `input` for `schema`; `undefined` when it fits. */
export async function inputProblem(
  schema: Record<string, unknown>,
  input: Record<string, unknown>,
): Promise<string | undefined> {
  const { AjvJsonSchemaValidator } = await import("@modelcontextprotocol/client/validators/ajv");
  let result;
  try {
    const check = new AjvJsonSchemaValidator().getValidator(schema as never);
    result = check(input);
  } catch (error) {
    return `the tool's input schema cannot be checked (${(error as Error)?.message ?? error})`;
  }
  if (result.valid) return undefined;
  // Ajv calls the value `data`: here it is the tool's input.
  return (result.errorMessage ?? "it does not fit the schema").replace(
    /(^|, )data(?=[/ ]|$)/g,
    "$1input",
  );
}
