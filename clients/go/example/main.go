// Command deberta-go-example calls deberta-serve over gRPC from Go with the
// stubs generated from proto/deberta/serving/v1/inference.proto (its
// go_package option): the model's description, then, with each head the
// model has, a classification, a fill-mask and a token classification
// (entities, every label kept) of one text, and, for a reranker, the
// documents ordered by their relevance to the text. Each answer is printed on its own line as
// "<method> <JSON>", in protobuf's JSON mapping with zero values included.
// A failed call is printed as "<method>: <code>: <message>" on standard
// error, with exit code 1.
//
//	deberta-go-example -server=localhost:50051 -text="Paris is the [MASK] of France."
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	servingv1 "github.com/deberta-serve/deberta-serve/clients/go/servingv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

func main() {
	server := flag.String("server", "localhost:50051", "the server's gRPC address")
	text := flag.String("text", "Paris is the [MASK] of France.", "the text to classify and fill in")
	documents := flag.String("documents", "Paris is the capital of France.|The Nile is a river in Africa.",
		"a reranker's documents for -text as the query, separated by '|'")
	deadline := flag.Duration("deadline", 10*time.Second, "the deadline of each call")
	model := flag.String("model", "", "the model to call on a server of several (they are listed first); empty: its only one")
	flag.Parse()

	// Plaintext, as the demo server listens; use grpc.WithTransportCredentials
	// with credentials.NewClientTLSFromFile for a server with --tls_cert.
	conn, err := grpc.Dial(*server, grpc.WithInsecure())
	if err != nil {
		fmt.Fprintf(os.Stderr, "dial %s: %v\n", *server, err)
		os.Exit(3)
	}
	defer conn.Close()
	client := servingv1.NewInferenceServiceClient(conn)

	call := func(method string, do func(ctx context.Context) (proto.Message, error)) {
		ctx, cancel := context.WithTimeout(context.Background(), *deadline)
		defer cancel()
		answer, err := do(ctx)
		if err != nil {
			failed := status.Convert(err)
			fmt.Fprintf(os.Stderr, "%s: %s: %s\n", method, failed.Code(), failed.Message())
			os.Exit(1)
		}
		json, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(answer)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", method, err)
			os.Exit(1)
		}
		fmt.Printf("%s %s\n", method, json)
	}

	sequence := &servingv1.Sequence{Text: *text}
	if *model != "" {
		call("ListModels", func(ctx context.Context) (proto.Message, error) {
			return client.ListModels(ctx, &servingv1.ListModelsRequest{})
		})
	}
	var info *servingv1.ModelInfo
	call("GetModelInfo", func(ctx context.Context) (proto.Message, error) {
		answer, err := client.GetModelInfo(ctx, &servingv1.GetModelInfoRequest{Model: *model})
		info = answer
		return answer, err
	})
	if info.HasClassifier {
		topK := int32(2) // The two best labels, or the one a reranker has.
		if len(info.Labels) < 2 {
			topK = int32(len(info.Labels))
		}
		call("Classify", func(ctx context.Context) (proto.Message, error) {
			return client.Classify(ctx, &servingv1.ClassifyRequest{Model: *model, Sequences: []*servingv1.Sequence{sequence}, TopK: topK})
		})
	}
	if info.HasFillMask {
		call("FillMask", func(ctx context.Context) (proto.Message, error) {
			return client.FillMask(ctx, &servingv1.FillMaskRequest{Model: *model,
				Sequences: []*servingv1.FillMaskSequence{{Sequence: sequence}}, TopK: 3})
		})
	}
	if info.HasTokenClassifier {
		call("ClassifyTokens", func(ctx context.Context) (proto.Message, error) {
			return client.ClassifyTokens(ctx, &servingv1.ClassifyTokensRequest{Model: *model,
				Sequences: []*servingv1.Sequence{sequence}, Aggregation: servingv1.Aggregation_AGGREGATION_FIRST,
				KeepAllLabels: true})
		})
	}
	if info.IsReranker {
		call("Rerank", func(ctx context.Context) (proto.Message, error) {
			return client.Rerank(ctx, &servingv1.RerankRequest{Model: *model,
				Query: *text, Documents: strings.Split(*documents, "|"), ReturnDocuments: true})
		})
	}
}
