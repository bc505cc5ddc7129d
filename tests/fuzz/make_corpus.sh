#!/bin/sh
# Regenerates the seed corpora in tests/fuzz/corpus/ from data/ and small
# files written here (by sensim itself and by /usr/bin/python3). Run from
# the source root after `make`; the results are committed, so this is only
# needed when formats change. Crash reproducers (crash-*) are kept.
set -eu
S=${SENSIM_BIN:-build/sensim}
C=tests/fuzz/corpus
mkdir -p $C/rig $C/units $C/scene $C/mesh_obj $C/mesh_ply $C/mesh_gltf $C/mesh_glb $C/cloud $C/png \
         $C/csv_gt $C/csv_column $C/csv_vepd $C/log
for f in data/rigs/*.yaml data/presets/*.yaml data/*.yaml; do cp "$f" $C/rig/; done
for f in data/scenes/*.yaml; do cp "$f" $C/scene/; done
cp data/scenes/cone.gltf $C/mesh_gltf/
cp tests/data/png-bomb.png $C/png/
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
# A textured cube (texture in a data: URI, REPEAT sampler, node matrix), as
# written, with the KHR_texture_transform of the extension's example, and
# with a second texture coordinate set named by a required transform.
/usr/bin/python3 tests/data/khronos_ref.py synth $t
cp $t/box.gltf $C/mesh_gltf/textured-box.gltf
cp $t/box-transform.gltf $C/mesh_gltf/textured-box-transform.gltf
cp $t/box-texcoord1.gltf $C/mesh_gltf/textured-box-texcoord1.gltf
# Compressed and quantized GLB as tools ship them (gltfpack, draco_transcoder):
# an octahedron with normals, quantized, meshopt with filters, and Draco.
printf 'v 1 0 0\nv -1 0 0\nv 0 1 0\nv 0 -1 0\nv 0 0 1\nv 0 0 -1\nvn 1 0 0\nvn -1 0 0\nvn 0 1 0\nvn 0 -1 0\nvn 0 0 1\nvn 0 0 -1\n' > $t/oct.obj
printf 'f 1//1 3//3 5//5\nf 3//3 2//2 5//5\nf 2//2 4//4 5//5\nf 4//4 1//1 5//5\nf 3//3 1//1 6//6\nf 2//2 3//3 6//6\nf 4//4 2//2 6//6\nf 1//1 4//4 6//6\n' >> $t/oct.obj
gltfpack -i $t/oct.obj -o $C/mesh_glb/quant.glb >/dev/null
gltfpack -cc -i $t/oct.obj -o $C/mesh_glb/meshopt.glb >/dev/null
gltfpack -noq -i $t/oct.obj -o $t/oct.gltf >/dev/null
draco_transcoder -i $t/oct.gltf -o $C/mesh_glb/draco.glb >/dev/null
mkdir -p $t/big
$S trajectory --shape circle --duration 2 --rate 50 --speed 2 --radius 10 -o $t/gt.h5
$S export -g $t/gt.h5 -o $C/csv_gt/circle.csv
printf 't,x,y,z\n0,0,0,0\n0.1,0.2,0,0\n0.2,0.4,0.01,0\n0.3,0.6,0.03,0\n' > $C/csv_gt/track.csv
printf 't,wx,wy,wz\n0,0.001,0.002,-0.001\n0.01,0.0012,0.0019,-0.0011\n0.02,0.0009,0.0021,-0.0009\n' > $C/csv_column/imu.csv
printf '1.5\n2.5\n-3e-4\n' > $C/csv_column/plain.csv
printf 'se_time,gt_time,se_vel,gt_vel\n0.0,0.0,1.0,1.1\n0.1,0.1,1.2,1.1\n0.2,0.2,1.1,1.2\n0.3,,1.3,\n' > $C/csv_vepd/test.csv
cp $t/gt.h5 $t/big/gt.h5
cat > $t/rig.yaml <<'YAML'
seed: 3
sensors:
  - name: imu
    type: imu
    rate_hz: 100
    gyro: { noise_density: 1.0e-3, random_walk: 1.0e-5 }
    accel: { noise_density: 2.0e-3 }
  - name: gnss
    type: gnss
    rate_hz: 5
    origin_lla: [43.0731, -89.4012, 260.0]
    position_noise: { model: gaussian, sigma: 0.3 }
YAML
$S inject $t/rig.yaml $t/gt.h5 -o $t/big/imu.h5
$S trajectory --shape static --duration 2 --rate 100 -o $t/st.h5
$S inject $t/rig.yaml $t/st.h5 -o $t/big/static.h5
$S judge $t/big/imu.h5 -o $t/big/judged.h5 || true
/usr/bin/python3 tests/fuzz/make_corpus.py $C $t/big
