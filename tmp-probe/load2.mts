const m = await import('usearch'); console.log('tsx file', typeof m.default.Index);
