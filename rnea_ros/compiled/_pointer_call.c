/* rnea_ros.compiled._pointer_call: call a compiled kernel (a numba cfunc, see pointer_kernels.py)
 * on the data pointers of numpy vectors, with no per-call allocation.
 *
 *     Caller(address, int64_mask, count)(a0, a1, ..., ak) -> int status, or None
 *
 * There must be exactly `count` arguments (the vectors the kernel reads), and each a_i must be
 * exactly a numpy.ndarray of one dimension, C-contiguous, aligned, in native byte order, of dtype
 * int64 where bit i of int64_mask is set and float64 elsewhere, or, for a float64 vector other
 * than the result, a tuple of at most 6 floats (numpy.float64 too) or ints, copied; the last one
 * (the result) must be writeable. Then the function at `address`, of C type
 * int64 (*)(void **p, int64 *n), is called with the vectors' data pointers p[i] and lengths n[i],
 * and its int64 status is returned. When the last argument is an int n instead, the result is a
 * new float64 vector of n, returned when the status is 0 (None otherwise). Any other argument:
 * None, and nothing is called (the caller takes its checked path, which names the culprit). Sizes
 * are the kernel's to check.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <stddef.h>
#include <stdint.h>

#define MAX_VECTORS 8
#define MAX_TUPLE 6
#define NEEDED (NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED)

typedef void *vp;
typedef int64_t i64;
typedef i64 (*kernel)(vp *, i64 *);

static PyObject *run(void *address, unsigned long mask, Py_ssize_t expected, PyObject *const *vectors,
                     Py_ssize_t count)
{
    if (count != expected) {
        PyErr_Format(PyExc_TypeError, "%zd vectors, got %zd", expected, count);
        return NULL;
    }
    vp p[MAX_VECTORS];
    i64 n[MAX_VECTORS];
    PyObject *result = NULL; /* the allocated result when the last argument is its length */
    PyObject *last = vectors[count - 1];
    if (PyLong_CheckExact(last)) {
        npy_intp length = (npy_intp)PyLong_AsSsize_t(last);
        if (length < 0) {
            if (PyErr_Occurred())
                return NULL;
            Py_RETURN_NONE;
        }
        result = PyArray_SimpleNew(1, &length, NPY_DOUBLE);
        if (result == NULL)
            return NULL;
        p[count - 1] = PyArray_DATA((PyArrayObject *)result);
        n[count - 1] = (i64)length;
    }
    double numbers[MAX_VECTORS][MAX_TUPLE]; /* the tuples' numbers */
    for (Py_ssize_t i = 0; i < (result == NULL ? count : count - 1); i++) {
        PyObject *o = vectors[i];
        if (PyTuple_CheckExact(o) && i < count - 1 && !((mask >> i) & 1)) {
            Py_ssize_t size = PyTuple_GET_SIZE(o);
            if (size > MAX_TUPLE)
                goto not_acceptable;
            for (Py_ssize_t k = 0; k < size; k++) {
                PyObject *x = PyTuple_GET_ITEM(o, k);
                if (PyFloat_Check(x)) /* numpy.float64 too: a float */
                    numbers[i][k] = PyFloat_AS_DOUBLE(x);
                else if (PyLong_CheckExact(x)) {
                    numbers[i][k] = PyLong_AsDouble(x);
                    if (numbers[i][k] == -1.0 && PyErr_Occurred()) {
                        PyErr_Clear();
                        goto not_acceptable;
                    }
                }
                else
                    goto not_acceptable;
            }
            p[i] = numbers[i];
            n[i] = (i64)size;
            continue;
        }
        if (Py_TYPE(o) != &PyArray_Type)
            goto not_acceptable;
        PyArrayObject *a = (PyArrayObject *)o;
        int want = (mask >> i) & 1 ? NPY_INT64 : NPY_DOUBLE;
        if (PyArray_NDIM(a) != 1 || PyArray_TYPE(a) != want || !PyArray_ISNOTSWAPPED(a) ||
            (PyArray_FLAGS(a) & NEEDED) != NEEDED)
            goto not_acceptable;
        p[i] = PyArray_DATA(a);
        n[i] = (i64)PyArray_DIM(a, 0);
    }
    if (result == NULL && !(PyArray_FLAGS((PyArrayObject *)last) & NPY_ARRAY_WRITEABLE))
        goto not_acceptable;
    i64 status = ((kernel)address)(p, n);
    if (result == NULL)
        return PyLong_FromLongLong((long long)status);
    if (status == 0)
        return result;
    Py_DECREF(result);
    Py_RETURN_NONE;

not_acceptable:
    Py_XDECREF(result);
    Py_RETURN_NONE;
}

/* Caller(address, int64_mask, count): a callable, Caller(*vectors) -> run(...) */
typedef struct {
    PyObject_HEAD
    void *address;
    unsigned long mask;
    Py_ssize_t count;
    vectorcallfunc vectorcall;
} Caller;

static PyObject *caller_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Caller *c = (Caller *)self;
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames)) {
        PyErr_SetString(PyExc_TypeError, "Caller takes no keyword arguments");
        return NULL;
    }
    return run(c->address, c->mask, c->count, args, PyVectorcall_NARGS(nargsf));
}

static PyObject *caller_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *address_obj;
    unsigned long mask;
    Py_ssize_t count;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "Caller(address, int64_mask, count) takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "Okn", &address_obj, &mask, &count))
        return NULL;
    if (count < 1 || count > MAX_VECTORS) {
        PyErr_Format(PyExc_ValueError, "Caller: 1 to %d vectors, got %zd", MAX_VECTORS, count);
        return NULL;
    }
    void *address = PyLong_AsVoidPtr(address_obj);
    if (address == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "Caller: null kernel address");
        return NULL;
    }
    Caller *c = (Caller *)type->tp_alloc(type, 0);
    if (c == NULL)
        return NULL;
    c->address = address;
    c->mask = mask;
    c->count = count;
    c->vectorcall = caller_vectorcall;
    return (PyObject *)c;
}

static PyTypeObject CallerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rnea_ros.compiled._pointer_call.Caller",
    .tp_basicsize = sizeof(Caller),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Caller(address, int64_mask, count)(*vectors) -> int status, or None when a vector does not qualify",
    .tp_new = caller_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Caller, vectorcall),
};

static PyMethodDef methods[] = {{NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_pointer_call",
    "Call a compiled kernel on the data pointers of numpy vectors (see pointer_kernels.py).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__pointer_call(void)
{
    import_array();
    if (PyType_Ready(&CallerType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&CallerType);
    if (PyModule_AddObject(m, "Caller", (PyObject *)&CallerType) < 0) {
        Py_DECREF(&CallerType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
