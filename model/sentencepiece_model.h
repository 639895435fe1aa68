// SentencePieceModel: libsentencepiece, loaded apart from the rest of the
// process. Debian's libsentencepiece carries its own copy of protobuf and
// exports it: linked into a process that also has libprotobuf (gRPC, the
// server), the two copies' symbols interpose and the process crashes while
// loading. So SentencePiece lives in a plugin, libdeberta_sentencepiece.so
// (sentencepiece_plugin.cc), opened with RTLD_LOCAL | RTLD_DEEPBIND: its
// protobuf stays private to it. The plugin also keeps SentencePiece's own
// `absl::string_view` (std::string_view) away from Debian's abseil.
#ifndef DEBERTA_MODEL_SENTENCEPIECE_MODEL_H_
#define DEBERTA_MODEL_SENTENCEPIECE_MODEL_H_

#include <memory>
#include <string>
#include <vector>

namespace deberta::model {

// What the plugin implements (plain C++ types only: the plugin and the
// process share libstdc++, not abseil). Thread-safe once loaded.
class SentencePieceModel {
 public:
  virtual ~SentencePieceModel() = default;
  // Each returns "" on success, else the error.
  virtual std::string Load(const std::string& path) = 0;
  // Ids, pieces and byte offsets ([begin, end) in `text`) of raw UTF-8
  // `text` (texts may hold U+0000).
  struct Piece {
    int id;
    std::string piece;
    int begin, end;
  };
  virtual std::string Encode(const std::string& text, std::vector<Piece>* pieces) const = 0;
  virtual std::string Decode(const std::vector<int>& ids, std::string* text) const = 0;
  virtual int PieceSize() const = 0;
  virtual int PieceToId(const std::string& piece) const = 0;  // The unknown id when absent.
  virtual std::string IdToPiece(int id) const = 0;            // REQUIRES: 0 <= id < PieceSize().
  virtual int unk_id() const = 0;
};

// A new, empty model from the plugin, or null with `error` set when the
// plugin cannot be opened. The plugin is looked for in
// $DEBERTA_SENTENCEPIECE_PLUGIN (a file), next to the executable, in
// ../lib/deberta-serve/ from it, and in the build folder it was built in.
std::unique_ptr<SentencePieceModel> NewSentencePieceModel(std::string* error);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_SENTENCEPIECE_MODEL_H_
