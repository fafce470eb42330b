// Package fence holds the module's one import fence: a test that reads the real import graph of
// every package (go list) and fails on an edge that does not point down the layers, an edge from
// one tower into another's, or a package linking what its layer must not (Ginkgo in the mock, the
// receiver, report or the proxy; the REST description's library below the mock's wiring). It has
// no code of its own.
package fence
