
embed_predict
x
weightscaled"Mul
scaled
biasshifted"Add
shiftedy"Reludag:x:weight:biasBy