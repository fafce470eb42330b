// Package uploads is the suite's driver of the upload flow: reservations, file PUTs and finalizes
// (overlapping ones while a content scan runs among them), the sample files it sends, the file
// server a from-url import reads, the keys and workspaces whose upload buckets leave a spec room,
// and the configs that name uploads.
//
// Its functions fail the running spec (Gomega's Expect) when an answer breaks the text, and skip
// it when the target lacks what the spec needs; they are called from inside a spec.
package uploads
