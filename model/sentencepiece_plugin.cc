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
  std::string Encode(const std::string& text, std::vector<int>* ids,
                     std::vector<std::string>* pieces) const override {
    ids->clear();
    pieces->clear();
    const auto status = processor_.Encode(std::string_view(text.data(), text.size()), ids);
    if (!status.ok()) return status.ToString();
    for (int id : *ids) pieces->push_back(processor_.IdToPiece(id));
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
