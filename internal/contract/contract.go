// Package contract names the figures of the contract once, in the contract's own units, for the
// mock, the suite and the proxy alike: limits, windows, ceilings and the time spans a test jumps a
// clock by. Where a figure is the interface text's, its comment quotes the section; where it is
// the reference's own choice (the text leaves it open), the comment says so. It imports nothing,
// so every package of the module may use it.
package contract

// TestInputHeader is the request header of a test input (spec/testmode.yaml): a fault of the
// control API's table, forced for the one request that carries it. The reference's choice (the
// interface text has one environment and no test mode).
const TestInputHeader = "Mediaspec-Test-Input"
