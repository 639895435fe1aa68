// The request commands of deberta-cli against a running deberta-server.
// Sequences are given as token ids:
//   deberta-cli classify --server=localhost:50051 --sequences="1 17 42 2;1 9 2"
//   deberta-cli fill-mask --sequences="1 17 4 2" --top_k=5
//   deberta-cli classify --text="A man plays." --text_pair="Someone makes music."
//   deberta-cli fill-mask --text="Paris is the [MASK] of France."
//   deberta-cli tokenize --text="Hello world" [--text_pair=...] [--max_length=N]
//   deberta-cli zero-shot --text="The match ended 2-1." --labels=sports,politics [--multi_label]
//   deberta-cli classify-tokens --text="John lives in Paris." [--aggregation=first] [--windows --stride=128]
//   deberta-cli rerank --query="Where is it?" --documents="first|second" [--top_n=3] [--windows]
//   deberta-cli info
//   deberta-cli health [--health_service=deberta.serving.v1.InferenceService]
// Each returns the process exit code.
#ifndef DEBERTA_TOOLS_CLIENT_COMMANDS_H_
#define DEBERTA_TOOLS_CLIENT_COMMANDS_H_

#include "deberta/serving/v1/inference.pb.h"

namespace deberta::tools {

int ClassifyCommand();
int FillMaskCommand();
int InfoCommand();
// `zero-shot --text ... --labels a,b,c [--multi_label]`: one label and score a line.
int ZeroShotCommand();
// `classify-tokens --text ...`: the entities, one a line (label, score,
// span, word, and the token's position under --aggregation=none).
int ClassifyTokensCommand();
// `rerank --query ... --documents "a|b"`: the documents by score, one a
// line (index, score, windows when more than one, the document).
int RerankCommand();
// `tokenize --text`: the server's tokenization (one id, type, piece a line).
int RemoteTokenizeCommand();
// 0 when SERVING, 1 otherwise.
int HealthCommand();
// The server's models: name, version, state, task, device, dtype (or JSON).
int ModelsCommand();
// LoadModel (load) or UnloadModel of --model_name; needs an admin key.
int LoadModelCommand(bool load);

// The text requests' options, shared with the benchmarks (bench_texts.h):
// longest_first truncation when --max_length is set; --windows, --stride
// and --aggregate into `long_input` (on a bad --aggregate, prints why and
// returns false).
serving::v1::Truncation TruncationFromFlags();
bool LongInputFromFlags(serving::v1::LongInput* long_input);

}  // namespace deberta::tools

#endif  // DEBERTA_TOOLS_CLIENT_COMMANDS_H_
