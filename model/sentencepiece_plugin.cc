// libdeberta_sentencepiece.so: SentencePieceModel over libsentencepiece,
// the only code that includes it (and no abseil: SentencePiece defines its
// own absl::string_view). Opened by sentencepiece_model.cc.
#include <sentencepiece_processor.h>

#include "model/sentencepiece_model.h"

namespace deberta::model {
namespace {

class SentencePieceModelImpl final : public SentencePieceModel {
 public:
  std::string Load(const std::string& path) override {
    const auto status = processor_.Load(path);
    return status.ok() ? std::string() : status.ToString();
  }
  std::string Encode(const std::string& text, std::vector<Piece>* pieces) const override {
    pieces->clear();
    // (Loading was checked; encoding a loaded model does not fail.)
    const sentencepiece::ImmutableSentencePieceText encoded =
        processor_.EncodeAsImmutableProto(std::string_view(text.data(), text.size()));
    for (const auto& p : encoded.pieces()) {
      const int id = static_cast<int>(p.id());
      pieces->push_back({id, processor_.IdToPiece(id), static_cast<int>(p.begin()), static_cast<int>(p.end())});
    }
    return "";
  }
  std::string Decode(const std::vector<int>& ids, std::string* text) const override {
    const auto status = processor_.Decode(ids, text);
    return status.ok() ? std::string() : status.ToString();
  }
  int PieceSize() const override { return processor_.GetPieceSize(); }
  int PieceToId(const std::string& piece) const override { return processor_.PieceToId(piece); }
  int unk_id() const override { return processor_.unk_id(); }
  std::string IdToPiece(int id) const override { return processor_.IdToPiece(id); }

 private:
  sentencepiece::SentencePieceProcessor processor_;
};

}  // namespace
}  // namespace deberta::model

extern "C" __attribute__((visibility("default"))) deberta::model::SentencePieceModel*
deberta_new_sentencepiece_model() {
  return new deberta::model::SentencePieceModelImpl();
}
