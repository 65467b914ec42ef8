/**
 * The one wire contract of Baton: every request, response, push and hello frame, as zod
 * schemas with the size limits in them. Hub, clients, MCP server, CLI, extension and webview all import
 * this file, so a change breaks the build, not the user. Platform-free: imports only zod. The schemas
 * live in parts, each importing only the ones before it: scalars (limits, scalars, statuses, error
 * codes), workspaces (a card's workspace, project settings, workspace/gc), dispatch (agent kinds,
 * assignments, pauses, runs), domain (domain
 * objects and events), cards (card method params and results), hooks (`hooks/*`), diff (`card/diff`),
 * methods (the other methods and the `methods` table) and frames (hello, request, response, event and
 * notice frames). Import from here, not from a part.
 */
export * from './scalars';
export * from './workspaces';
export * from './dispatch';
export * from './domain';
export * from './cards';
export * from './hooks';
export * from './diff';
export * from './methods';
export * from './frames';
