// KHR_draco_mesh_compression decoding with Debian's libdraco (render/draco.h).
// The only C++ in the library: libdraco has no C interface, so this file
// wraps the few calls glTF needs (Decoder::DecodeMeshFromBuffer, attributes
// by unique id, faces) behind one extern "C" function. No exception leaves
// it: allocation failures are caught and reported like Draco's own errors.
#include "draco.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include <draco/compression/decode.h>

static int fail(char *err, size_t errlen, const char *what)
{
    std::snprintf(err, errlen, "%s", what);
    return -1;
}

extern "C" int sensim_draco_decode(const unsigned char *data, size_t len, const int *ids, int nids, float **attr,
                                   int *ncomp, size_t *npoints, uint32_t **tri, size_t *ntri, char *err,
                                   size_t errlen)
{
    for (int k = 0; k < nids; k++)
        attr[k] = nullptr;
    *tri = nullptr;
    try {
        draco::DecoderBuffer buf;
        buf.Init(reinterpret_cast<const char *>(data), len);
        auto type = draco::Decoder::GetEncodedGeometryType(&buf);
        if (!type.ok() || type.value() != draco::TRIANGULAR_MESH)
            return fail(err, errlen, type.ok() ? "the Draco data is not a triangle mesh"
                                               : type.status().error_msg());
        draco::Decoder dec;
        auto st = dec.DecodeMeshFromBuffer(&buf);
        if (!st.ok())
            return fail(err, errlen, st.status().error_msg());
        std::unique_ptr<draco::Mesh> mesh = std::move(st).value();
        size_t np = mesh->num_points(), nf = mesh->num_faces();
        for (int k = 0; k < nids; k++) {
            const draco::PointAttribute *a = ids[k] >= 0 ? mesh->GetAttributeByUniqueId((uint32_t)ids[k]) : nullptr;
            if (!a || a->num_components() < 1 || a->num_components() > 4) {
                char what[96];
                std::snprintf(what, sizeof what, "no Draco attribute with unique id %d (of 1 to 4 components)",
                              ids[k]);
                for (int j = 0; j < k; j++)
                    std::free(attr[j]);
                return fail(err, errlen, what);
            }
            int nc = a->num_components();
            float *o = static_cast<float *>(std::malloc(np * nc * sizeof(float) + 1));
            if (!o) {
                for (int j = 0; j < k; j++)
                    std::free(attr[j]);
                return fail(err, errlen, "out of memory");
            }
            for (size_t i = 0; i < np; i++)
                if (!a->ConvertValue(a->mapped_index(draco::PointIndex((uint32_t)i)), (int8_t)nc, o + i * nc)) {
                    std::free(o);
                    for (int j = 0; j < k; j++)
                        std::free(attr[j]);
                    return fail(err, errlen, "a Draco attribute value does not convert to float");
                }
            attr[k] = o;
            ncomp[k] = nc;
        }
        uint32_t *t = static_cast<uint32_t *>(std::malloc(nf * 3 * sizeof(uint32_t) + 1));
        if (!t) {
            for (int j = 0; j < nids; j++)
                std::free(attr[j]);
            return fail(err, errlen, "out of memory");
        }
        for (size_t f = 0; f < nf; f++) {
            const draco::Mesh::Face &face = mesh->face(draco::FaceIndex((uint32_t)f));
            for (int r = 0; r < 3; r++)
                t[3 * f + r] = face[r].value();
        }
        *tri = t;
        *npoints = np;
        *ntri = nf;
        return 0;
    } catch (const std::bad_alloc &) {
        for (int j = 0; j < nids; j++) {
            std::free(attr[j]);
            attr[j] = nullptr;
        }
        return fail(err, errlen, "out of memory");
    }
}
