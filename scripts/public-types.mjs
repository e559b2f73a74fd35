// The optional properties of the package's public types that refuse `undefined` under
// `exactOptionalPropertyTypes`: a program passing on its own optional setting (`{ timeoutMs: settings.timeout }`)
// gets a compile error there, though the package reads undefined as not given. Found by walking every type the
// entry points export (their properties, a function's or a method's parameters and results, type arguments),
// not by a list; with them, the iterators it meets that end with `any` (TypeScript 5.6's lib defaults).
// `node scripts/public-types.mjs` lists both for src; `--fix` writes `| undefined` into src.
// test/e2e/library-public-types.test.ts runs the same walk over the packed tarball's declarations.
import { readFileSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

/** Whether a declared type already takes undefined (any, unknown, undefined, void, or a union holding one). */
function takesUndefined(type) {
  const loose = ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.Undefined | ts.TypeFlags.Void;
  if (type.flags & loose) return true;
  return Boolean(type.isUnion() && type.types.some((t) => t.flags & loose));
}

/** The iterators whose end value and next() argument default to `any` (TypeScript 5.6's lib). */
const ITERATORS = new Set(['AsyncIterable', 'AsyncIterator', 'AsyncIterableIterator', 'AsyncGenerator', 'AsyncIteratorObject', 'Iterable', 'Iterator', 'IterableIterator', 'Generator', 'IteratorObject']);

/**
 * Every optional property (a property signature or a class's property with a written type) declared in a file
 * `own(fileName)` accepts, reachable from the exports of `entries`, whose type refuses undefined.
 * Each as { file, line, column, name, path, decl } (line and column from 1; path: where the walk met it first).
 * With them, every iterator the walk meets whose end value or next() argument is `any`, as { path, type }.
 */
export function publicTypeGaps(program, entries, own) {
  const checker = program.getTypeChecker();
  const seen = new Set();
  const found = new Map();
  const ownSymbol = (symbol) => (symbol?.declarations ?? []).some((d) => own(d.getSourceFile().fileName));

  const anyIterators = new Map();

  const visitSignature = (signature, path) => {
    for (const parameter of signature.getParameters()) visit(checker.getTypeOfSymbol(parameter), `${path}(${parameter.getName()})`);
    for (const parameter of signature.getTypeParameters() ?? []) {
      const constraint = checker.getBaseConstraintOfType(parameter);
      if (constraint) visit(constraint, `${path}<${parameter.symbol.getName()}>`);
    }
    visit(signature.getReturnType(), `${path}()`);
  };

  const visitProperty = (property, path) => {
    for (const decl of property.declarations ?? []) {
      if (!own(decl.getSourceFile().fileName)) continue;
      const optional = (ts.isPropertySignature(decl) || ts.isPropertyDeclaration(decl)) && decl.questionToken && decl.type;
      if (optional && !takesUndefined(checker.getTypeFromTypeNode(decl.type)) && !found.has(decl)) {
        const source = decl.getSourceFile();
        const { line, character } = source.getLineAndCharacterOfPosition(decl.name.getStart());
        found.set(decl, { file: source.fileName, line: line + 1, column: character + 1, name: property.getName(), path, decl });
      }
    }
    visit(checker.getTypeOfSymbol(property), path);
  };

  function visit(type, path) {
    if (!type || seen.has(type)) return;
    seen.add(type);
    if (type.isUnionOrIntersection()) return type.types.forEach((t) => visit(t, path));
    if (type.flags & ts.TypeFlags.Index) return visit(type.type, path);
    if (!(type.flags & ts.TypeFlags.Object)) return;
    if (type.objectFlags & ts.ObjectFlags.Reference) {
      const args = checker.getTypeArguments(type);
      if (ITERATORS.has(type.target.getSymbol()?.getName()) && args.slice(1).some((a) => a.flags & ts.TypeFlags.Any)) anyIterators.set(path, checker.typeToString(type));
      args.forEach((t) => visit(t, path));
    }
    // A type of the platform's or another package's (AbortSignal, undici's Dispatcher): its members are not ours.
    const symbol = type.aliasSymbol ?? type.getSymbol();
    const foreign = symbol && !ownSymbol(symbol) && !(symbol.flags & ts.SymbolFlags.TypeLiteral && !symbol.declarations?.length);
    if (type.aliasTypeArguments) type.aliasTypeArguments.forEach((t) => visit(t, path));
    if (foreign) return;
    for (const signature of type.getCallSignatures()) visitSignature(signature, path);
    for (const signature of type.getConstructSignatures()) visitSignature(signature, `new ${path}`);
    for (const property of type.getProperties()) visitProperty(property, `${path}.${property.getName()}`);
    const numberIndex = type.getNumberIndexType();
    const stringIndex = type.getStringIndexType();
    if (numberIndex) visit(numberIndex, `${path}[]`);
    if (stringIndex) visit(stringIndex, `${path}[]`);
  }

  for (const entry of entries) {
    const source = program.getSourceFile(entry);
    if (!source) throw new Error(`${entry} is not in the program`);
    const moduleSymbol = checker.getSymbolAtLocation(source);
    for (let symbol of checker.getExportsOfModule(moduleSymbol)) {
      if (symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
      const name = symbol.getName();
      if (symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Class | ts.SymbolFlags.Enum)) visit(checker.getDeclaredTypeOfSymbol(symbol), name);
      if (symbol.flags & ts.SymbolFlags.Value) visit(checker.getTypeOfSymbol(symbol), name);
    }
  }
  return {
    optional: [...found.values()].sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column),
    anyIterators: [...anyIterators].map(([path, type]) => ({ path, type })),
  };
}

/** The strict options a newcomer checks with (as test/unit/library-strict-types.test.ts). */
export const STRICTEST = {
  module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true,
  exactOptionalPropertyTypes: true, noEmit: true, skipLibCheck: true, types: ['node'],
};

/** Types that must be read as a whole before `| undefined` is added (`() => void | undefined` is another type). */
const NEEDS_PARENS = new Set([ts.SyntaxKind.FunctionType, ts.SyntaxKind.ConstructorType, ts.SyntaxKind.ConditionalType, ts.SyntaxKind.InferType, ts.SyntaxKind.TypeOperator]);

/** Writes `| undefined` after each found property's type, in its source file. */
export function addUndefined(found) {
  const byFile = new Map();
  for (const f of found) byFile.set(f.file, [...(byFile.get(f.file) ?? []), f]);
  for (const [file, list] of byFile) {
    let text = readFileSync(file, 'utf8');
    for (const { decl } of [...list].sort((a, b) => b.decl.type.end - a.decl.type.end)) {
      const { type } = decl;
      const start = type.getStart();
      const inner = text.slice(start, type.end);
      const written = NEEDS_PARENS.has(type.kind) ? `(${inner}) | undefined` : `${inner} | undefined`;
      text = text.slice(0, start) + written + text.slice(type.end);
    }
    writeFileSync(file, text);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = resolve(import.meta.dirname, '..');
  const entries = ['src/client/index.ts', 'src/kit/index.ts', 'src/batch/index.ts'].map((e) => resolve(root, e));
  const program = ts.createProgram(entries, STRICTEST);
  const { optional: found, anyIterators } = publicTypeGaps(program, entries, (f) => f.startsWith(resolve(root, 'src')));
  for (const f of found) console.log(`${relative(root, f.file)}:${f.line}:${f.column} ${f.path}`);
  console.log(`${found.length} optional properties refuse undefined`);
  for (const i of anyIterators) console.log(`${i.path}: ${i.type}`);
  console.log(`${anyIterators.length} iterators end with any`);
  if (process.argv.includes('--fix')) addUndefined(found);
}
