import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { expect, it } from 'vitest';

// A program written against router-cli, router-cli/kit and router-cli/batch under `strict` can name the
// type of every option it passes and every result it gets: each interface, type or class of the
// package that an entry point's exports take or give (their parameters, results, properties) is
// exported by an entry point too, a module's private alias of a plain shape (`type Body = Record<…>`) as much as an
// interface: a declaration file names it, a program cannot. Constructors count, also of a class exported as a type only
// (`EventStream`): its declaration names what it takes. The entry points' declarations are made from these src files.
// Checking the package's types takes seconds alone, minutes on a loaded machine: a long bound.
const ROOT = resolve(import.meta.dirname, '..', '..');
const ENTRIES = ['client', 'kit', 'batch'].map((e) => join(ROOT, 'src', e, 'index.ts'));

it('every named type an entry point takes or gives is exported by an entry point', () => {
  const program = ts.createProgram(ENTRIES, { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, noEmit: true, types: ['node'] });
  const checker = program.getTypeChecker();
  const own = (d: ts.Declaration) => d.getSourceFile().fileName.startsWith(join(ROOT, 'src'));
  const real = (s: ts.Symbol) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s);
  const asExported = ENTRIES.flatMap((f) => checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(f)!)!));
  const entryExports = asExported.map(real);
  const exported = new Set(entryExports.flatMap((s) => s.declarations ?? []));
  const named = (d: ts.Declaration) => ts.isInterfaceDeclaration(d) || ts.isTypeAliasDeclaration(d) || ts.isClassDeclaration(d);
  const unnamed = new Map<string, string>();
  const seen = new Set<ts.Type>();

  const visit = (type: ts.Type | undefined, where: string, depth: number): void => {
    if (!type || depth > 6 || seen.has(type)) return;
    seen.add(type);
    const symbol = type.aliasSymbol ?? type.getSymbol();
    const declarations = symbol?.declarations?.filter((d) => own(d) && named(d)) ?? [];
    if (declarations.length && !declarations.some((d) => exported.has(d))) {
      const d = declarations[0]!;
      unnamed.set(`${symbol!.name} (${relative(ROOT, d.getSourceFile().fileName)})`, where);
    }
    for (const t of [...(type.aliasTypeArguments ?? []), ...(type.isUnionOrIntersection() ? type.types : []), ...checker.getTypeArguments(type as ts.TypeReference)]) visit(t, where, depth + 1);
    for (const sig of [...type.getCallSignatures(), ...type.getConstructSignatures()]) {
      for (const p of sig.getParameters()) visit(checker.getTypeOfSymbol(p), `${where}(${p.name})`, depth + 1);
      visit(sig.getReturnType(), `${where}()`, depth + 1);
      visit(checker.getAwaitedType(sig.getReturnType()), `${where}()`, depth + 1);
    }
    if (symbol && symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeLiteral | ts.SymbolFlags.Class)) {
      for (const p of type.getProperties()) {
        if (p.valueDeclaration && ts.getCombinedModifierFlags(p.valueDeclaration) & ts.ModifierFlags.Private) continue;
        visit(checker.getTypeOfSymbol(p), `${where}.${p.name}`, depth + 1);
      }
    }
  };
  for (const s of entryExports) {
    if (s.flags & ts.SymbolFlags.Value) visit(checker.getTypeOfSymbol(s), s.name, 0);
    if (s.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias)) visit(checker.getDeclaredTypeOfSymbol(s), s.name, 0);
  }
  expect(Object.fromEntries(unnamed)).toEqual({});
}, 300_000);
