// Validates an OpenAPI document with swagger-parser (the OpenAPI 3.0
// schema, and every $ref resolved): the e2e WebTest runs it on the served
// /v1/openapi.json, and on a broken copy to show that it fails.
//
//   node validate_openapi.mjs <http URL or file>
//
// Prints "valid: <paths> paths, <schemas> schemas" and exits 0, or prints
// the validator's error and exits 1.
import { readFile } from "node:fs/promises";
import SwaggerParser from "@apidevtools/swagger-parser";

const source = process.argv[2];
if (!source) {
  console.error("usage: node validate_openapi.mjs <http URL or file>");
  process.exit(2);
}

try {
  const text = source.startsWith("http")
    ? await (await fetch(source)).text()
    : await readFile(source, "utf8");
  const api = await SwaggerParser.validate(JSON.parse(text));
  const schemas = Object.keys(api.components?.schemas ?? {}).length;
  console.log(`valid: ${Object.keys(api.paths).length} paths, ${schemas} schemas`);
} catch (error) {
  console.error(`invalid: ${error.message}`);
  process.exit(1);
}
