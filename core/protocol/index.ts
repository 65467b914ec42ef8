/**
 * The one wire contract of Baton (DESIGN §4): every request, response, push and hello frame, as zod
 * schemas with the size limits in them. Hub, clients, MCP server, CLI, extension and webview all import
 * this file, so a change breaks the build, not the user. Platform-free: imports only zod. The schemas
 * live in four parts, each importing only the ones before it: protocolDomain (limits, scalars, domain
 * objects), protocolCards (card method params and results), protocolMethods (the other methods and
 * the `methods` table) and protocolFrames (hello, request, response, event and notice frames), plus
 * protocolDiff (`card/diff`, issue 33), which the table imports. Import from here, not from a part.
 */
export * from './domain';
export * from './cards';
export * from './diff';
export * from './methods';
export * from './frames';
