def get_usr(uid):
    return {"id": uid, "name": "ada"}
