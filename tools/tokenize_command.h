// `deberta-cli tokenize --model DIR --jsonl`: the checkpoint's tokenizer,
// offline, over JSON lines (the protocol of the golden tokenizer checker):
// one request per line on standard input, one answer per line on standard
// output, in order.
//   {"op":"tokenize","text":T}                   -> {"ids":[..],"pieces":[..]}
//   {"op":"encode","text":A,"text_pair":B|null,"max_length":N|null}
//                                                -> {"input_ids":[..],"token_type_ids":[..]}
//     (longest_first truncation when max_length is given)
//   {"op":"encode_masked","text":T}              -> {"input_ids":[..]}
//   {"op":"decode","ids":[..]}                   -> {"text":".."}
// A request it cannot serve gets {"error":".."} and the tool goes on. DIR
// may hold only tokenizer files.
#ifndef DEBERTA_TOOLS_TOKENIZE_COMMAND_H_
#define DEBERTA_TOOLS_TOKENIZE_COMMAND_H_

#include <string>

namespace deberta::tools {

// Returns the exit code: 2 without --jsonl, 1 if the tokenizer cannot be loaded.
int TokenizeCommand(const std::string& model_dir);
// Whether `tokenize` runs offline (--jsonl) rather than against a server.
bool TokenizeOffline();

}  // namespace deberta::tools

#endif  // DEBERTA_TOOLS_TOKENIZE_COMMAND_H_
