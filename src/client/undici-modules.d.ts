// The undici modules src/client/undici.ts loads, typed there from undici's own types.
declare module 'undici/lib/dispatcher/dispatcher.js' { const value: unknown; export default value; }
declare module 'undici/lib/api/api-connect.js' { const value: unknown; export default value; }
declare module 'undici/lib/dispatcher/agent.js' { const value: unknown; export default value; }
declare module 'undici/lib/dispatcher/pool.js' { const value: unknown; export default value; }
declare module 'undici/lib/dispatcher/env-http-proxy-agent.js' { const value: unknown; export default value; }
