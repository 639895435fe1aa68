// Cohere's own client (cohere-ai's CohereClientV2, pinned in package.json)
// against deberta-serve's /v2/rerank, its base URL pointed at the server.
// Prints one JSON object: the parsed answer of one rerank, and the error of
// a call without the key. Run by tests/e2e/compat_clients_test.cc.
//
//   node cohere_client.mjs BASE_URL API_KEY MODEL QUERY '["doc", ...]' TOP_N
import { CohereClientV2 } from "cohere-ai";

const [base, key, model, query, documentsJson, topN] = process.argv.slice(2);
const documents = JSON.parse(documentsJson);

const client = new CohereClientV2({ token: key, environment: base });
const answer = await client.rerank({ model, query, documents, topN: Number(topN) });

let noKey = "no error";
try {
  await new CohereClientV2({ token: "not-a-key", environment: base }).rerank({ model, query, documents });
} catch (error) {
  noKey = `${error.statusCode}: ${JSON.stringify(error.body)}`;
}
console.log(JSON.stringify({ answer, noKey }));
