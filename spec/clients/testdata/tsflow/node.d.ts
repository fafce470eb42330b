// The few Node.js APIs the flow uses, declared here so that it needs no @types/node.
declare const process: { argv: string[]; exitCode?: number };

declare module "node:http" {
  interface IncomingMessage {
    on(event: "data", cb: (chunk: Uint8Array) => void): this;
    on(event: "end", cb: () => void): this;
  }
  interface ServerResponse {
    writeHead(status: number): this;
    end(): void;
  }
  interface Server {
    listen(port: number, host: string, cb: () => void): this;
    address(): { port: number };
    close(): void;
  }
  function createServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Server;
}
